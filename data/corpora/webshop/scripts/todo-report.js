'use strict';

// Weekly report of open work markers, grouped by owner (see "Conventions" in the README).
// Usage: node scripts/todo-report.js src > todo-report.txt

const fs = require('fs');
const path = require('path');

const MARKER = /\b(TODO|FIXME)(?:\((\w+)\))?:?\s*(.*)$/;
const KINDS = ['TODO', 'FIXME'];
const UNOWNED = 'TODO/FIXME without an owner';

function* sourceFiles(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      yield* sourceFiles(full);
    } else if (/\.(js|jsx|ts|tsx)$/.test(entry.name)) {
      yield full;
    }
  }
}

function collect(root) {
  const byOwner = new Map();
  for (const file of sourceFiles(root)) {
    fs.readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
      const m = MARKER.exec(line);
      if (!m || !KINDS.includes(m[1])) {
        return;
      }
      const owner = m[2] || UNOWNED;
      const list = byOwner.get(owner) || [];
      list.push(`${file}:${i + 1} ${m[1]} ${m[3]}`);
      byOwner.set(owner, list);
    });
  }
  return byOwner;
}

const report = collect(process.argv[2] || 'src');
for (const [owner, items] of report) {
  process.stdout.write(`## ${owner} (${items.length} open TODO/FIXME)\n${items.join('\n')}\n\n`);
}
