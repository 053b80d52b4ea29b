import type { BatonControl } from '@baton/projects';

/** `control` with `onCall` run before every call of `method` (to count the hub's reads). */
export function spyOnControl(
  control: BatonControl,
  method: keyof BatonControl,
  onCall: () => void,
): BatonControl {
  return new Proxy(control, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      // The control keeps its state in private fields: its methods run on it, not on the proxy.
      if (property !== method) return (value as (...inner: unknown[]) => unknown).bind(target);
      return (...args: unknown[]) => {
        onCall();
        return (value as (...inner: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}
