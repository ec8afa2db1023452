// Sleeps the engine's loops can be woken from (new work, stop) and that never keep the
// process alive or leave a timer behind once woken.
export class Sleeper {
  private waiting = new Set<() => void>();

  sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiting.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.min(ms, 2_147_483_647));
      timer.unref();
      this.waiting.add(done);
    });
  }

  /** Ends every current sleep now. */
  wake(): void {
    for (const done of [...this.waiting]) done();
  }
}
