import { formatDistanceToNow } from "date-fns";

export type RunStatus = "queued" | "running" | "succeeded" | "failed";

export interface JobRow {
  name: string;
  schedule: string | null;
  ownerEmail: string;
  status: RunStatus;
  startedAt: string | null;
}

const BADGE: Record<RunStatus, string> = {
  queued: "badge badge-grey",
  running: "badge badge-blue",
  succeeded: "badge badge-green",
  failed: "badge badge-red",
};

export function badgeClass(status: RunStatus): string {
  return BADGE[status];
}

export function startedLabel(row: JobRow): string {
  if (!row.startedAt) {
    return "never";
  }
  return `${formatDistanceToNow(new Date(row.startedAt))} ago`;
}

export function renderRow(row: JobRow): HTMLTableRowElement {
  const tr = document.createElement("tr");
  for (const text of [row.name, row.schedule ?? "manual", row.ownerEmail, startedLabel(row)]) {
    const td = document.createElement("td");
    td.textContent = text;
    tr.appendChild(td);
  }
  tr.className = badgeClass(row.status);
  return tr;
}
