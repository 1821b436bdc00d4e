import type { Acquirer } from '../../lambdas/ports/acquirer';
import type { PaymentStore } from '../../lambdas/ports/payments';

/**
 * Faults at the step boundaries of one request, the way a process dies or a network loses a reply:
 * at the n-th payment write or acquirer call, either before it happens (a crash before the write; a
 * request that never reached the acquirer) or after it happened (a crash right after the intent
 * write; a reply the acquirer sent but we lost). From then on the "process" is dead: every further
 * write and call of this request fails, as nothing more would run after a crash.
 */
export interface Fault {
  readonly at: 'write' | 'acquirer';
  /** 1-based: the n-th write or acquirer call of the request. */
  readonly nth: number;
  readonly when: 'before' | 'after';
}

export class SimulatedCrash extends Error {
  override readonly name = 'SimulatedCrash';
}

export interface FaultyParts {
  readonly store: PaymentStore;
  readonly acquirer: Acquirer;
  /** Whether the fault fired. */
  fired(): boolean;
}

/** The store's and acquirer's methods whose calls count as steps (reads are never faulted). */
const WRITES: readonly (keyof PaymentStore)[] = ['apply', 'createPayment'];
const CALLS: readonly (keyof Acquirer)[] = ['authorize', 'completeAction', 'capture', 'void', 'refund', 'reverse', 'close'];

export function withFault(store: PaymentStore, acquirer: Acquirer, fault: Fault | undefined): FaultyParts {
  let dead = false;
  let fired = false;
  const counts = { write: 0, acquirer: 0 };
  const wrap = <T extends object>(target: T, kind: 'write' | 'acquirer', methods: readonly (keyof T)[]): T =>
    new Proxy(target, {
      get(obj, prop, receiver) {
        const value = Reflect.get(obj, prop, receiver) as unknown;
        if (typeof value !== 'function') return value;
        const counted = methods.includes(prop as keyof T);
        return async (...args: unknown[]) => {
          if (dead) throw new SimulatedCrash(`after the fault: ${String(prop)}`);
          if (!counted || !fault || fault.at !== kind) return (value as (...a: unknown[]) => unknown).apply(obj, args);
          const n = ++counts[kind];
          if (n !== fault.nth) return (value as (...a: unknown[]) => unknown).apply(obj, args);
          fired = true;
          dead = true;
          if (fault.when === 'after') await (value as (...a: unknown[]) => unknown).apply(obj, args);
          throw new SimulatedCrash(`${fault.when} ${kind} ${n} (${String(prop)})`);
        };
      },
    });
  return { store: wrap(store, 'write', WRITES), acquirer: wrap(acquirer, 'acquirer', CALLS), fired: () => fired };
}

/**
 * An acquirer that, like many real ones, cannot close a pending challenge or bar a request it has
 * not seen: `close` only tells what it knows. Late approvals become possible, and must be reversed.
 */
export function withoutClose(acquirer: Acquirer): Acquirer {
  return new Proxy(acquirer, {
    get(obj, prop, receiver) {
      if (prop === 'close') {
        return async (ref: Parameters<Acquirer['close']>[0]) =>
          (await obj.lookup(ref)) ?? { kind: 'unknown', acquirerRef: '', reason: 'This acquirer cannot close an operation.' };
      }
      return Reflect.get(obj, prop, receiver) as unknown;
    },
  });
}
