'use strict';

const LEVELS = ['debug', 'info', 'warn', 'error'];
const threshold = LEVELS.indexOf(process.env.LOG_LEVEL || 'info');

// The only console.log in the server: every other module logs through this file.
// Messages must not contain secrets: callers mask 'password=' values before logging.
function write(level, message) {
  if (LEVELS.indexOf(level) < threshold) {
    return;
  }
  const line = `${new Date().toISOString()} ${level.toUpperCase().padEnd(5)} ${message}`;
  console.log(line);
}

module.exports = {
  debug: (m) => write('debug', m),
  info: (m) => write('info', m),
  warn: (m) => write('warn', m),
  error: (m) => write('error', m),
};
