import { useEffect, useState } from 'react';

/** The value once it has stopped changing for `ms`: checks as you type without a call per key. */
export function useDebounced<T>(value: T, ms: number): T {
  const [settled, set] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => set(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}
