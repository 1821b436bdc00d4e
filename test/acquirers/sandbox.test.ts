import { createDocumentClient } from '../../lambdas/adapters/dynamodb/client';
import { SANDBOX_OTP } from '../../lambdas/adapters/sandbox-acquirer/rules';
import { SandboxAcquirer } from '../../lambdas/adapters/sandbox-acquirer/sandbox-acquirer';
import { startLocalBackend, type LocalBackend } from '../../local/backend';
import { acquirerContract, type AcquirerHarness } from './acquirer-contract';

/** The sandbox acquirer against the acquirer contract, on the local DynamoDB engine over HTTP. */
jest.setTimeout(60_000);

let backend: LocalBackend;
let acquirer: SandboxAcquirer;
const db = () => createDocumentClient({ endpoint: backend.dynamodbEndpoint });
let client: ReturnType<typeof db>;

beforeAll(async () => {
  backend = await startLocalBackend();
  client = db();
  acquirer = new SandboxAcquirer(client, backend.tableName);
});
afterAll(async () => {
  client?.destroy();
  await backend?.close();
});

acquirerContract('the sandbox', (): AcquirerHarness => ({
  acquirer,
  answerChallenge: async (key, _action, confirm) => {
    await acquirer.challenges.answerChallenge(key, { code: SANDBOX_OTP, confirm });
  },
  // 08/2038: the sandbox approves and the answer is lost on the way.
  loseNextAnswer: async (request) =>
    request.instrument.kind === 'card' ? { ...request, instrument: { kind: 'card', card: { ...request.instrument.card, expMonth: 8 } } } : request,
  closesChallenges: true,
}));
