import type { Config } from '../config';

/** Who runs the payment page, as its footer names them: the stage's configuration (PROVIDER_*). */
export interface PageProvider {
  readonly name: string;
  readonly termsUrl?: string;
  readonly privacyUrl?: string;
}

/** The footer's provider, or none when the stage names none (the footer then names no one). */
export function pageProviderOf(config: Pick<Config, 'PROVIDER_NAME' | 'PROVIDER_TERMS_URL' | 'PROVIDER_PRIVACY_URL'>): PageProvider | undefined {
  if (!config.PROVIDER_NAME) return undefined;
  return {
    name: config.PROVIDER_NAME,
    ...(config.PROVIDER_TERMS_URL ? { termsUrl: config.PROVIDER_TERMS_URL } : {}),
    ...(config.PROVIDER_PRIVACY_URL ? { privacyUrl: config.PROVIDER_PRIVACY_URL } : {}),
  };
}

