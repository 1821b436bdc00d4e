import { MemoryPaymentStore } from '../../lambdas/adapters/memory/payment-store';
import { paymentStoreContract } from './payment-store.contract';

paymentStoreContract('the in-memory store', async () => ({ store: new MemoryPaymentStore(), close: async () => undefined }));
