import { getCurrentWebview } from "@tauri-apps/api/webview";
import { useEffect, useState } from "react";
import { Badge, ErrorBox, Toasts } from "./components";
import { StoreProvider, useStore, type View } from "./store";
import { AuditView } from "./views/Audit";
import { ConnectionsView } from "./views/Connections";
import { KeysView } from "./views/Keys";
import { PartitionViewPage } from "./views/Partition";
import { SettingsView } from "./views/Settings";
import { SignView } from "./views/Sign";
import { VerifyView } from "./views/Verify";
import { HssView } from "./views/Hss";
import { StatsView } from "./views/Stats";
import { ProbesView } from "./views/Probes";

const NAV: { view: View; label: string; key: string }[] = [
  { view: "connections", label: "Connections", key: "1" },
  { view: "partition", label: "Partition", key: "2" },
  { view: "keys", label: "Keys", key: "3" },
  { view: "sign", label: "Sign", key: "4" },
  { view: "verify", label: "Verify", key: "5" },
  { view: "hss", label: "HSS keys", key: "6" },
  { view: "stats", label: "Statistics", key: "7" },
  { view: "probes", label: "Probes", key: "8" },
  { view: "audit", label: "Audit trail", key: "9" },
  { view: "settings", label: "Settings", key: "0" },
];

export function App() {
  return (
    <StoreProvider>
      <Shell />
    </StoreProvider>
  );
}

function AuditBadge() {
  const { audit, setView } = useStore();
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
    <button className="badge-button" onClick={() => setView("audit")} title={title} data-testid="audit-badge" data-state={k.state}>
      <Badge tone={k.state === "unlocked" ? "ok" : "warn"}>{text}</Badge>
    </button>
  );
}

/// The trail's integrity at a glance: the last verification (manual or scheduled).
function VerificationBadge() {
  const { audit, setView } = useStore();
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
    <button className="badge-button" onClick={() => setView("audit")} title={title} data-testid="verification-badge" data-state={state}>
      <Badge tone={tone}>{text}</Badge>
    </button>
  );
}

/// Files dropped anywhere on the window go to the Sign view.
function useDrop(): boolean {
  const { setView, setSignFiles } = useStore();
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
            setView("sign");
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
  }, [setSignFiles, setView]);
  return over;
}

function Shell() {
  const { status, view, setView, partition } = useStore();
  const dragging = useDrop();

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!e.altKey) return;
      const item = NAV.find((n) => n.key === e.key);
      if (item) {
        e.preventDefault();
        setView(item.view);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [setView]);

  if (status?.startup_error) {
    return (
      <main className="startup-error">
        <h1>HSM Console could not start</h1>
        <ErrorBox error={status.startup_error} />
      </main>
    );
  }

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
                onClick={() => setView(n.view)}
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
          <div className="topbar-partition" data-testid="current-partition">
            {partition ? (
              <>
                <strong>{partition.token.label}</strong>
                <span className="muted">serial {partition.token.serial}</span>
                {partition.logged_in ? (
                  <Badge tone="ok">{partition.logged_in === "so" ? "SO logged in" : "user logged in"}</Badge>
                ) : (
                  <Badge>not logged in</Badge>
                )}
              </>
            ) : (
              <span className="muted">No partition selected</span>
            )}
          </div>
          <div className="topbar-badges">
            <VerificationBadge />
            <AuditBadge />
          </div>
        </header>
        {partition?.builtin && (
          <div className="emulator-banner" role="note" data-testid="emulator-banner">
            Software emulator (lunasim) — not for production keys. Demo PINs: user 12345678, SO 87654321.
          </div>
        )}
        {status?.info?.builtin_note && !partition && (
          <div className="notice">Built-in partition unavailable: {status.info.builtin_note}</div>
        )}
        {status?.info?.startup_warnings.map((w) => (
          <div className="notice" key={w}>
            A remembered module was not loaded: {w}
          </div>
        ))}
        <main className="content">
          {status === null ? (
            <p className="muted">Starting…</p>
          ) : view === "connections" ? (
            <ConnectionsView />
          ) : view === "partition" ? (
            <PartitionViewPage />
          ) : view === "keys" ? (
            <KeysView />
          ) : view === "sign" ? (
            <SignView />
          ) : view === "verify" ? (
            <VerifyView />
          ) : view === "hss" ? (
            <HssView />
          ) : view === "stats" ? (
            <StatsView />
          ) : view === "probes" ? (
            <ProbesView />
          ) : view === "audit" ? (
            <AuditView />
          ) : (
            <SettingsView />
          )}
        </main>
      </div>
      <Toasts />
      {dragging && (
        <div className="drop-overlay" aria-hidden="true">
          Drop to sign
        </div>
      )}
    </div>
  );
}
