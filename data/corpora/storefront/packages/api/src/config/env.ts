/**
 * Reads the API configuration from the environment once, at startup.
 * Missing required settings stop the process with a readable message.
 */

export interface AppConfig {
  env: 'development' | 'test' | 'production';
  port: number;
  databaseUrl: string;
  stripeSecretKey: string;
  searchUrl: string;
  featureFlags: string[];
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set; see README.md`);
  }
  return value;
}

let cached: AppConfig | undefined;

export function loadConfig(): AppConfig {
  if (cached) return cached;
  const stripeSecretKey = process.env.STRIPE_SECRET_KEY ?? required('STRIPE_SECRET_KEY');
  cached = {
    env: (process.env.NODE_ENV as AppConfig['env']) ?? 'development',
    port: Number(process.env.PORT) || 8080,
    databaseUrl: required('DATABASE_URL'),
    stripeSecretKey,
    searchUrl: process.env.SEARCH_URL ?? 'http://10.0.3.12:9200',
    featureFlags: (process.env.FEATURE_FLAGS ?? '').split(',').filter(Boolean),
  };
  return cached;
}

export function resetConfigForTests(): void {
  cached = undefined;
}
