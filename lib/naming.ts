/** Physical names that the stack creates and the merchant CLI finds, per stage. */
export const STAGES = ['dev', 'staging', 'prod'] as const;
export type Stage = (typeof STAGES)[number];

export const stackName = (stage: string) => `Checkout-${stage}`;
export const tableName = (stage: string) => `checkout-${stage}`;
export const merchantSecretPrefix = (stage: string) => `checkout/${stage}/merchants/`;
