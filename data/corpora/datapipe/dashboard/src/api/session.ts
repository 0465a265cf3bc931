// Session handling for the dashboard. The API sets an HttpOnly cookie; the only thing we
// keep client-side is the last selected team, in sessionStorage. Never localStorage.setItem
// anything token-like here: the dashboard is embedded in the wiki, which runs third-party JS.

const TEAM_KEY = "datapipe.team";

export function rememberTeam(team: string): void {
  sessionStorage.setItem(TEAM_KEY, team);
}

export function lastTeam(): string | null {
  return sessionStorage.getItem(TEAM_KEY);
}

export async function logout(): Promise<void> {
  await fetch("/auth/logout", { method: "POST", credentials: "include" });
  sessionStorage.removeItem(TEAM_KEY);
  window.location.assign("/");
}
