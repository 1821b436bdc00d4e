/** Request bodies that pass validation, and small edits that break one rule each. */

export type Json = Record<string, unknown>;

export function validSessionBody(merchantKey: string, overrides: Json = {}): Json {
  return {
    merchant_key: merchantKey,
    operation: 'purchase',
    success_url: 'https://shop.example/success',
    cancel_url: 'https://shop.example/cancel',
    order: { number: 'order-1234', amount: '0.19', currency: 'USD', description: 'Important gift' },
    customer: { name: 'John Doe', email: 'john@example.com' },
    billing_address: { country: 'US', state: 'CA', city: 'Los Angeles', address: '1 Main St', zip: '90001', phone: '+1 (555) 010-0199' },
    ...overrides,
  };
}

export type Mutation = (body: Json) => void;

function parentOf(body: Json, path: string): { parent: Json; key: string } {
  const keys = path.split('.');
  const key = keys.pop() as string;
  let parent = body;
  for (const k of keys) {
    if (parent[k] === null || typeof parent[k] !== 'object') parent[k] = {};
    parent = parent[k] as Json;
  }
  return { parent, key };
}

/** Sets a dotted path, creating objects on the way. */
export const set = (path: string, value: unknown): Mutation => (body) => {
  const { parent, key } = parentOf(body, path);
  parent[key] = value;
};

/** Removes a dotted path. */
export const drop = (path: string): Mutation => (body) => {
  const { parent, key } = parentOf(body, path);
  delete parent[key];
};

/** Several edits at once. */
export const all = (...mutations: Mutation[]): Mutation => (body) => mutations.forEach((m) => m(body));

export const mutated = (body: Json, mutation: Mutation): Json => {
  const copy = structuredClone(body);
  mutation(copy);
  return copy;
};
