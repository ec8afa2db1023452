// A refresh loop for the inputs that run in Weir's processes (bus consumers, syslog listeners):
// runs `round` now and again `everyMs` after each round ends; a failed round goes to `onError`
// and the loop carries on. stop() ends the loop and resolves once the running round is over.

export interface RefreshLoop {
  stop(): Promise<void>;
}

export function startRefreshLoop(
  round: () => Promise<void>,
  everyMs: number,
  onError: (err: unknown) => void,
): RefreshLoop {
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  let stopping = false;
  const tick = () => {
    current = round()
      .catch(onError)
      .finally(() => {
        if (!stopping) timer = setTimeout(tick, everyMs);
      });
  };
  tick();
  return {
    async stop() {
      stopping = true;
      clearTimeout(timer);
      await current;
    },
  };
}
