// The console's screens: one entry per route module, in navigation order. A screen is a
// lazy chunk (its libraries load with it); `requires` hides it from callers without that
// permission. Adding a screen (Search, Detections...) is one module under screens/ and one
// entry here (web/README.md).
import { lazy, type ComponentType, type LazyExoticComponent } from 'react';

export interface Screen {
  /** wouter pattern; nested paths (`/integrations/:id`) are separate entries with `nav: false`. */
  path: string;
  title: string;
  group: 'Pipeline' | 'Investigation' | 'Normalization' | 'Delivery' | 'Administration';
  requires?: string;
  nav?: boolean;
  component: LazyExoticComponent<ComponentType>;
}

export const SCREENS: Screen[] = [
  { path: '/', title: 'Dashboard', group: 'Pipeline', component: lazy(() => import('./screens/dashboard')) },
  {
    path: '/flow',
    title: 'Data flow',
    group: 'Pipeline',
    requires: 'route.read',
    component: lazy(() => import('./screens/flow')),
  },
  {
    path: '/integrations',
    title: 'Integrations',
    group: 'Pipeline',
    requires: 'integration.read',
    component: lazy(() => import('./screens/integrations')),
  },
  {
    path: '/integrations/:id',
    title: 'Integration',
    group: 'Pipeline',
    requires: 'integration.read',
    nav: false,
    component: lazy(() => import('./screens/integrations/detail')),
  },
  {
    path: '/search',
    title: 'Search',
    group: 'Investigation',
    requires: 'mapping.read',
    component: lazy(() => import('./screens/search')),
  },
  {
    path: '/detections',
    title: 'Detections',
    group: 'Investigation',
    component: lazy(() => import('./screens/detections')),
  },
  {
    path: '/detections/rules',
    title: 'Detection rules',
    group: 'Investigation',
    requires: 'mapping.read',
    component: lazy(() => import('./screens/detections/rules')),
  },
  {
    path: '/detections/:id',
    title: 'Detection',
    group: 'Investigation',
    nav: false,
    component: lazy(() => import('./screens/detections/detail')),
  },
  {
    path: '/quarantine',
    title: 'Quarantine',
    group: 'Normalization',
    requires: 'quarantine.read',
    component: lazy(() => import('./screens/quarantine')),
  },
  {
    path: '/drift',
    title: 'Drift',
    group: 'Normalization',
    requires: 'drift.read',
    component: lazy(() => import('./screens/drift')),
  },
  {
    path: '/mappings',
    title: 'Mappings',
    group: 'Normalization',
    requires: 'mapping.read',
    component: lazy(() => import('./screens/mappings')),
  },
  {
    path: '/mappings/:id',
    title: 'Mapping',
    group: 'Normalization',
    requires: 'mapping.read',
    nav: false,
    component: lazy(() => import('./screens/mappings/editor')),
  },
  {
    path: '/enrichment',
    title: 'Enrichment',
    group: 'Normalization',
    requires: 'user.manage',
    component: lazy(() => import('./screens/enrichment')),
  },
  {
    path: '/routes',
    title: 'Routes',
    group: 'Delivery',
    requires: 'route.read',
    component: lazy(() => import('./screens/routes')),
  },
  {
    path: '/destinations',
    title: 'Destinations',
    group: 'Delivery',
    requires: 'destination.read',
    component: lazy(() => import('./screens/destinations')),
  },
  {
    path: '/destinations/:id',
    title: 'Destination',
    group: 'Delivery',
    requires: 'destination.read',
    nav: false,
    component: lazy(() => import('./screens/destinations/detail')),
  },
  {
    path: '/admin/organizations',
    title: 'Organizations',
    group: 'Administration',
    component: lazy(() => import('./screens/admin/organizations')),
  },
  {
    path: '/admin/users',
    title: 'Users',
    group: 'Administration',
    requires: 'user.manage',
    component: lazy(() => import('./screens/admin/users')),
  },
  {
    path: '/admin/tokens',
    title: 'API tokens',
    group: 'Administration',
    component: lazy(() => import('./screens/admin/tokens')),
  },
  {
    path: '/admin/service-accounts',
    title: 'Service accounts',
    group: 'Administration',
    requires: 'user.manage',
    component: lazy(() => import('./screens/admin/service-accounts')),
  },
  {
    path: '/admin/audit',
    title: 'Audit trail',
    group: 'Administration',
    requires: 'user.manage',
    component: lazy(() => import('./screens/admin/audit')),
  },
  {
    path: '/admin/license',
    title: 'License',
    group: 'Administration',
    component: lazy(() => import('./screens/admin/license')),
  },
  {
    path: '/admin/identity',
    title: 'Identity',
    group: 'Administration',
    requires: 'user.manage',
    component: lazy(() => import('./screens/admin/identity')),
  },
  {
    path: '/admin/email',
    title: 'E-mail',
    group: 'Administration',
    requires: 'user.manage',
    component: lazy(() => import('./screens/admin/email')),
  },
  {
    path: '/admin/configuration',
    title: 'Configuration',
    group: 'Administration',
    requires: 'user.manage',
    component: lazy(() => import('./screens/admin/configuration')),
  },
];
