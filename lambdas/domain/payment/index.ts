/**
 * The payment: its shape (model.ts), the rule a change depends on (guard.ts), what a change does
 * (change.ts) and the transitions the use cases decide with (transitions.ts). Pure: no I/O and no
 * clock; the time a rule needs is a parameter.
 */
export * from './model';
export * from './guard';
export * from './change';
export * from './queues';
export * from './refunds';
export * from './attempt-transitions';
export * from './money-transitions';
