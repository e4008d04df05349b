// The window: the sidebar (from the view table in ./nav.tsx), the top bar with the selected
// partition and the audit badges, notices, the current view, notifications, the drop target.
import { getCurrentWebview } from "@tauri-apps/api/webview";
import { useEffect, useState } from "react";
import { Badge, ErrorBox, Toasts } from "./components";
import { NAV, VIEWS } from "./nav";
import { StateProvider, useAppStatus, useAudit, useNavigate, usePartition, useSignQueue, useView } from "./state";

export function App() {
  return (
    <StateProvider views={VIEWS}>
      <Shell />
    </StateProvider>
  );
}

function AuditBadge() {
  const { audit } = useAudit();
  const navigate = useNavigate();
  if (!audit) return <Badge tone="bad">audit unavailable</Badge>;
  const k = audit.key;
  const text = k.state === "unlocked" ? "audit unlocked" : k.state === "locked" ? "audit locked" : "audit: no key yet";
  const title =
    k.state === "unlocked"
      ? `The trail's key is open (held by ${k.holder}); actions are recorded.`
      : k.state === "locked"
        ? `Log in to ${k.holder} to unlock the trail; privileged actions are refused until then.`
        : "The first user login creates the trail's key on that partition.";
  return (
    <button className="badge-button" onClick={() => navigate("audit")} title={title} data-testid="audit-badge" data-state={k.state}>
      <Badge tone={k.state === "unlocked" ? "ok" : "warn"}>{text}</Badge>
    </button>
  );
}

/// The trail's integrity at a glance: the last verification (manual or scheduled).
function VerificationBadge() {
  const { audit } = useAudit();
  const navigate = useNavigate();
  // A clock ticking once a minute, so "not verified since" appears without other updates.
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 60_000);
    return () => clearInterval(t);
  }, []);
  if (!audit) return null;
  const v = audit.last_verification;
  const maxAgeMs = audit.auto_verify === "hourly" ? 3_600_000 : audit.auto_verify === "daily" ? 86_400_000 : Infinity;
  let tone: "ok" | "warn" | "bad";
  let text: string;
  let state: string;
  if (!v) {
    [tone, text, state] = ["warn", "trail not verified yet", "never"];
  } else if (!v.intact) {
    [tone, text, state] = ["bad", `trail broken at record ${v.first_bad_seq ?? "?"}`, "broken"];
  } else if (now - Date.parse(v.at) > maxAgeMs + 120_000) {
    [tone, text, state] = ["warn", `not verified since ${new Date(v.at).toLocaleString()}`, "stale"];
  } else {
    [tone, text, state] = ["ok", `trail intact · ${new Date(v.at).toLocaleTimeString()}`, "intact"];
  }
  const title = v
    ? `${v.trigger === "scheduled" ? "Scheduled" : "Manual"} verification at ${new Date(v.at).toLocaleString()}: ${v.intact ? `${v.records} records intact` : (v.explanation ?? "broken")}. Automatic verification: ${audit.auto_verify}.`
    : `No verification since the console started. Automatic verification: ${audit.auto_verify}.`;
  return (
    <button className="badge-button" onClick={() => navigate("audit")} title={title} data-testid="verification-badge" data-state={state}>
      <Badge tone={tone}>{text}</Badge>
    </button>
  );
}

function CurrentPartition() {
  const { partition } = usePartition();
  return (
    <div className="topbar-partition" data-testid="current-partition">
      {partition ? (
        <>
          <strong>{partition.token.label}</strong>
          <span className="muted">serial {partition.token.serial}</span>
          {partition.logged_in ? (
            <Badge tone="ok" title={partition.role_name ?? undefined}>
              <span data-testid="current-role" data-role={partition.logged_in}>
                {partition.logged_in === "so"
                  ? "SO logged in"
                  : partition.logged_in === "user"
                    ? "user logged in"
                    : `${partition.role_name} logged in`}
                {partition.role_name && (partition.logged_in === "so" || partition.logged_in === "user") ? ` (${partition.role_name})` : ""}
              </span>
            </Badge>
          ) : (
            <Badge>not logged in</Badge>
          )}
        </>
      ) : (
        <span className="muted">No partition selected</span>
      )}
    </div>
  );
}

/// The emulator's warning, and why the built-in partition or a remembered module is missing.
function Notices() {
  const { status } = useAppStatus();
  const { partition } = usePartition();
  return (
    <>
      {partition?.builtin && (
        <div className="emulator-banner" role="note" data-testid="emulator-banner">
          Software emulator (lunasim) — not for production keys. Demo PINs: user 12345678, SO 87654321.
        </div>
      )}
      {status?.info?.builtin_note && !partition && <div className="notice">Built-in partition unavailable: {status.info.builtin_note}</div>}
      {status?.info?.startup_warnings.map((w) => (
        <div className="notice" key={w}>
          A remembered module was not loaded: {w}
        </div>
      ))}
    </>
  );
}

/// Files dropped anywhere on the window go to the Sign view.
function DropTarget() {
  const navigate = useNavigate();
  const { setSignFiles } = useSignQueue();
  const [over, setOver] = useState(false);
  useEffect(() => {
    let unlisten: (() => void) | undefined;
    let gone = false;
    void getCurrentWebview()
      .onDragDropEvent((e) => {
        const p = e.payload;
        if (p.type === "enter" || p.type === "over") setOver(true);
        else if (p.type === "leave") setOver(false);
        else if (p.type === "drop") {
          setOver(false);
          if (p.paths.length) {
            setSignFiles((old) => [...old, ...p.paths.filter((x) => !old.includes(x))]);
            navigate("sign");
          }
        }
      })
      .then((u) => {
        if (gone) u();
        else unlisten = u;
      })
      .catch(() => undefined);
    return () => {
      gone = true;
      unlisten?.();
    };
  }, [setSignFiles, navigate]);
  if (!over) return null;
  return (
    <div className="drop-overlay" aria-hidden="true">
      Drop to sign
    </div>
  );
}

/// Alt+1 … Alt+9, Alt+0 switch views (the keys are in the view table).
function useShortcuts() {
  const navigate = useNavigate();
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!e.altKey) return;
      const item = NAV.find((n) => n.key === e.key);
      if (item) {
        e.preventDefault();
        navigate(item.view);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [navigate]);
}

function Shell() {
  const { status } = useAppStatus();
  const view = useView();
  const navigate = useNavigate();
  useShortcuts();

  if (status?.startup_error) {
    return (
      <main className="startup-error">
        <h1>HSM Console could not start</h1>
        <ErrorBox error={status.startup_error} />
      </main>
    );
  }

  const Current = (NAV.find((n) => n.view === view) ?? NAV[0]).Component;
  return (
    <div className="app">
      <nav className="sidebar" aria-label="Views">
        <div className="brand">
          <img src="./icon.svg" alt="" width={28} height={28} />
          <span>HSM Console</span>
        </div>
        <ul>
          {NAV.map((n) => (
            <li key={n.view}>
              <button
                className={view === n.view ? "nav-item active" : "nav-item"}
                aria-current={view === n.view ? "page" : undefined}
                onClick={() => navigate(n.view)}
                title={`Alt+${n.key}`}
              >
                {n.label}
              </button>
            </li>
          ))}
        </ul>
        <div className="sidebar-footer">{status?.info ? `v${status.info.version}` : ""}</div>
      </nav>
      <div className="main">
        <header className="topbar">
          <CurrentPartition />
          <div className="topbar-badges">
            <VerificationBadge />
            <AuditBadge />
          </div>
        </header>
        <Notices />
        <main className="content">{status === null ? <p className="muted">Starting…</p> : <Current />}</main>
      </div>
      <Toasts />
      <DropTarget />
    </div>
  );
}
