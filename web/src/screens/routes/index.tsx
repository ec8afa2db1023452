// Routes: the ordered list (drag, or the keyboard, to reorder; saved as the complete order),
// create and edit with the condition editor, dry run, and each route's versions.
import {
  closestCenter,
  DndContext,
  KeyboardSensor,
  PointerSensor,
  useSensor,
  useSensors,
  type DragEndEvent,
} from '@dnd-kit/core';
import {
  arrayMove,
  SortableContext,
  sortableKeyboardCoordinates,
  useSortable,
  verticalListSortingStrategy,
} from '@dnd-kit/sortable';
import { CSS } from '@dnd-kit/utilities';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { useSearch } from 'wouter';
import { api, call, type Ok } from '../../api/client';
import { useOrgFilter, useSession } from '../../session';
import { Badge, Dialog, ErrorNote, Notice, PageHeader } from '../../ui/kit';
import { RouteDryRun } from './dry-run';
import { RouteForm } from './route-form';
import { RouteVersions } from './versions';

type Route = Ok<'routes.get'>;

function RouteRow({
  route,
  canEdit,
  onEdit,
  onVersions,
}: {
  route: Route;
  canEdit: boolean;
  onEdit: () => void;
  onVersions: () => void;
}) {
  const sortable = useSortable({ id: route.id, disabled: !canEdit });
  const unreachable = route.warnings?.find((w) => w.code === 'route.unreachable');
  const style = { transform: CSS.Transform.toString(sortable.transform), transition: sortable.transition };
  return (
    <li ref={sortable.setNodeRef} style={style}>
      {canEdit ? (
        <button
          type="button"
          className="handle"
          aria-label={`Move ${route.name}`}
          {...sortable.attributes}
          {...sortable.listeners}
        >
          ⠿
        </button>
      ) : null}
      <span>{route.position}.</span>
      <strong>{route.name}</strong>
      <Badge value={route.enabled ? 'enabled' : 'disabled'} />
      {route.final ? <Badge value="final" /> : null}
      {unreachable ? <span className="badge warn">unreachable</span> : null}
      <span className="hint">
        {route.destination_ids.length} destination(s) · v{route.version} ·{' '}
        {route.condition ? <code>{route.condition_text ?? JSON.stringify(route.condition)}</code> : 'every event'}
        {route.transforms.length ? ` · ${route.transforms.length} transform(s)` : ''}
        {unreachable ? ` · never matches: final route "${unreachable.route_name}" comes first` : ''}
      </span>
      <span className="row" style={{ marginLeft: 'auto' }}>
        {canEdit ? (
          <button type="button" onClick={onEdit}>
            Edit
          </button>
        ) : null}
        <button type="button" onClick={onVersions}>
          Versions
        </button>
      </span>
    </li>
  );
}

export default function Routes() {
  const org = useOrgFilter();
  const { can } = useSession();
  const canEdit = can('user.manage');
  const client = useQueryClient();
  const wanted = new URLSearchParams(useSearch()).get('route');
  const [editing, setEditing] = useState<Route | 'new'>();
  const [versions, setVersions] = useState<Route>();
  const routes = useQuery({
    queryKey: ['routes', org],
    queryFn: () => call(api.GET('/api/collectors/routes', { params: { query: org } })),
  });
  const [order, setOrder] = useState<Route[]>([]);
  useEffect(() => setOrder(routes.data ?? []), [routes.data]);
  useEffect(() => {
    // Opened from the data-flow map with ?route=<id>.
    const found = wanted ? routes.data?.find((r) => r.id === wanted) : undefined;
    if (found) setVersions(found);
  }, [routes.data, wanted]);

  const reorder = useMutation({
    mutationFn: (next: Route[]) => {
      const organizationId = next[0]?.organization_id;
      return call(
        api.POST('/api/collectors/routes/reorder', {
          body: { route_ids: next.map((r) => r.id), ...(organizationId ? { organization_id: organizationId } : {}) },
        }),
      );
    },
    onSettled: () => client.invalidateQueries({ queryKey: ['routes'] }),
  });
  const sensors = useSensors(
    useSensor(PointerSensor),
    useSensor(KeyboardSensor, { coordinateGetter: sortableKeyboardCoordinates }),
  );
  const onDragEnd = (e: DragEndEvent) => {
    if (!e.over || e.active.id === e.over.id) return;
    const moved = order.find((r) => r.id === e.active.id);
    const target = order.find((r) => r.id === e.over?.id);
    // The order is per organization: a route moves only among its organization's routes.
    if (!moved || !target || moved.organization_id !== target.organization_id) return;
    const from = order.indexOf(moved);
    const to = order.indexOf(target);
    const next = arrayMove(order, from, to);
    setOrder(next);
    reorder.mutate(next.filter((r) => r.organization_id === moved.organization_id));
  };

  return (
    <>
      <PageHeader title="Routes">
        {canEdit ? (
          <button type="button" className="primary" onClick={() => setEditing('new')}>
            New route
          </button>
        ) : null}
      </PageHeader>
      <p className="hint">
        Routes are tried in this order for each event; a final route stops the rest.{' '}
        {canEdit ? 'Drag a route by its handle (or focus the handle, Space, arrows, Space) to reorder.' : ''}
      </p>
      <ErrorNote error={routes.error ?? reorder.error} />
      {reorder.isSuccess ? <Notice>Order saved: live at the next dispatch cycle.</Notice> : null}
      <DndContext sensors={sensors} collisionDetection={closestCenter} onDragEnd={onDragEnd}>
        <SortableContext items={order.map((r) => r.id)} strategy={verticalListSortingStrategy}>
          <ol className="sortable" aria-label="Routes in order">
            {order.map((r) => (
              <RouteRow
                key={r.id}
                route={r}
                canEdit={canEdit}
                onEdit={() => setEditing(r)}
                onVersions={() => setVersions(r)}
              />
            ))}
          </ol>
        </SortableContext>
      </DndContext>
      {routes.data?.length === 0 ? (
        <p className="empty">
          No route yet: events that no route matches are counted as filtered (no route) and not kept.
        </p>
      ) : null}
      {canEdit ? <RouteDryRun /> : null}
      <Dialog
        title={editing === 'new' ? 'New route' : `Edit ${editing?.name ?? ''}`}
        open={editing !== undefined}
        onClose={() => setEditing(undefined)}
      >
        <RouteForm
          key={editing === 'new' ? 'new' : editing?.id}
          route={editing === 'new' ? undefined : editing}
          onDone={() => setEditing(undefined)}
        />
      </Dialog>
      <Dialog
        title={`Versions of ${versions?.name ?? ''}`}
        open={versions !== undefined}
        onClose={() => setVersions(undefined)}
      >
        {versions ? <RouteVersions route={versions} /> : null}
      </Dialog>
    </>
  );
}
