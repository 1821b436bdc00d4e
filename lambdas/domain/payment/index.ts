/**
 * The payment: its shape (model.ts), the rule a change depends on (guard.ts), what a change does
 * (change.ts), the transitions the use cases decide with (attempt-transitions.ts,
 * money-transitions.ts), the refund arithmetic (refunds.ts) and where a payment waits (queues.ts).
 * Pure: no I/O and no clock; the time a rule needs is a parameter (docs/adr/0030).
 */
export * from './model';
export * from './guard';
export * from './change';
export * from './queues';
export * from './refunds';
export * from './attempt-transitions';
export * from './money-transitions';
export * from './chargebacks';
