'use strict';

const crypto = require('crypto');
const { DB } = require('./db');

const HASH_ITERATIONS = 120000;

// pbkdf2 with a per-user salt; the "password" argument is the raw form value.
function hashPassword(password, salt) {
  return crypto.pbkdf2Sync(password, salt, HASH_ITERATIONS, 32, 'sha256').toString('hex');
}

class UserService {
  async findByEmail(email) {
    const [user] = await DB.query('SELECT id, email, password_hash, salt FROM users WHERE email = $1', [email]);
    return user || null;
  }

  async verifyLogin(email, password) {
    const user = await this.findByEmail(email);
    if (!user) {
      return false;
    }
    return hashPassword(password, user.salt) === user.password_hash;
  }

  async updateEmail(userId, email) {
    // TODO(omar): send a confirmation mail before switching the address
    await DB.query('UPDATE users SET email = $1 WHERE id = $2', [email, userId]);
  }

  describe() {
    return 'UserService (backed by DB.query)';
  }
}

const deleteInactiveUsers = async (days) => {
  const rows = await DB.query(
    "DELETE FROM users WHERE last_login < now() - ($1 || ' days')::interval RETURNING id",
    [days],
  );
  return rows.length;
};

const countUsers = async () => {
  const cached = UserService.cachedCount;
  return cached === undefined ? 0 : cached;
};

module.exports = { UserService, hashPassword, deleteInactiveUsers, countUsers };
