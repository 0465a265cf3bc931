'use strict';

const env = process.env;

module.exports = {
  port: Number(env.PORT || 8080),
  databaseUrl: env.DATABASE_URL || 'postgres://shop@localhost:5432/webshop',
  poolSize: Number(env.DB_POOL_SIZE || 10),
  stripeKey: env.STRIPE_SECRET_KEY,
  // TODO(maria): read the mail settings from config/default.ini instead of hard-coding them
  smtp: { host: 'localhost', port: 1025 },
};
