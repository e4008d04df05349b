// The window: the sidebar (from the view table in ./nav.tsx), the top bar with the selected
// partition and the audit badges, notices, the current view, notifications, the drop target.
import { getCurrentWebview } from "@tauri-apps/api/webview";
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { Badge, ErrorBox, Toasts } from "./components";
import { useFormat } from "./i18n";
import { NAV, VIEWS } from "./nav";
import { roleNameText } from "./features/credentials/roles";
import { HaWarningBadge } from "./features/ha/HaBadges";
import { KeygenIndicator } from "./features/keys/KeygenIndicator";
import { StateProvider, useAppStatus, useAudit, useNavigate, usePartition, useSignQueue, useView } from "./state";

export function App() {
  return (
    <StateProvider views={VIEWS}>
      <Shell />
    </StateProvider>
  );
}

function AuditBadge() {
  const { t } = useTranslation();
  const { audit } = useAudit();
  const navigate = useNavigate();
  if (!audit) return <Badge tone="bad">{t("app.audit_unavailable")}</Badge>;
  const k = audit.key;
  const text = k.state === "unlocked" ? t("app.audit_unlocked") : k.state === "locked" ? t("app.audit_locked") : t("app.audit_no_key");
  const title =
    k.state === "unlocked"
      ? t("app.audit_unlocked_title", { holder: k.holder })
      : k.state === "locked"
        ? t("app.audit_locked_title", { holder: k.holder })
        : t("app.audit_no_key_title");
  return (
    <button className="badge-button" onClick={() => navigate("audit")} title={title} data-testid="audit-badge" data-state={k.state}>
      <Badge tone={k.state === "unlocked" ? "ok" : "warn"}>{text}</Badge>
    </button>
  );
}

/// The trail's integrity at a glance: the last verification (manual or scheduled).
function VerificationBadge() {
  const { t } = useTranslation();
  const fmt = useFormat();
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
  const schedule = t(`settings.auto_verify_${audit.auto_verify}`);
  if (!v) {
    [tone, text, state] = ["warn", t("app.trail_not_verified"), "never"];
  } else if (!v.intact) {
    [tone, text, state] = ["bad", t("app.trail_broken_at", { seq: v.first_bad_seq ?? "?" }), "broken"];
  } else if (now - Date.parse(v.at) > maxAgeMs + 120_000) {
    [tone, text, state] = ["warn", t("app.trail_stale", { at: fmt.dateTime(v.at) }), "stale"];
  } else {
    [tone, text, state] = ["ok", t("app.trail_intact", { at: fmt.time(v.at) }), "intact"];
  }
  const title = v
    ? t(v.trigger === "scheduled" ? "app.verification_scheduled_title" : "app.verification_manual_title", {
        at: fmt.dateTime(v.at),
        result: v.intact ? t("app.records_intact", { count: v.records }) : (v.explanation ?? t("app.broken")),
        schedule,
      })
    : t("app.no_verification_title", { schedule });
  return (
    <button className="badge-button" onClick={() => navigate("audit")} title={title} data-testid="verification-badge" data-state={state}>
      <Badge tone={tone}>{text}</Badge>
    </button>
  );
}

function CurrentPartition() {
  const { t } = useTranslation();
  const { partition } = usePartition();
  return (
    <div className="topbar-partition" data-testid="current-partition">
      {partition ? (
        <>
          <strong>{partition.token.label}</strong>
          <span className="muted">{t("common.serial", { serial: partition.token.serial })}</span>
          {partition.logged_in ? (
            <Badge tone="ok" title={partition.role_name ? roleNameText(partition.role_name) : undefined}>
              <span data-testid="current-role" data-role={partition.logged_in}>
                {partition.logged_in === "so"
                  ? t("common.so_logged_in")
                  : partition.logged_in === "user"
                    ? t("common.user_logged_in")
                    : t("app.role_logged_in", { role: roleNameText(partition.role_name) })}
                {partition.role_name && (partition.logged_in === "so" || partition.logged_in === "user")
                  ? ` (${roleNameText(partition.role_name)})`
                  : ""}
              </span>
            </Badge>
          ) : (
            <Badge>{t("common.not_logged_in")}</Badge>
          )}
        </>
      ) : (
        <span className="muted">{t("common.no_partition_selected")}</span>
      )}
    </div>
  );
}

/// The emulator's warning, and why the built-in partition or a remembered module is missing.
function Notices() {
  const { t } = useTranslation();
  const { status } = useAppStatus();
  const { partition } = usePartition();
  return (
    <>
      {partition?.builtin && (
        <div className="emulator-banner" role="note" data-testid="emulator-banner">
          {t("app.emulator_banner")}
        </div>
      )}
      {status?.info?.builtin_note && !partition && (
        <div className="notice">{t("app.builtin_unavailable", { note: status.info.builtin_note })}</div>
      )}
      {status?.info?.startup_warnings.map((w) => (
        <div className="notice" key={w}>
          {t("app.module_not_loaded", { warning: w })}
        </div>
      ))}
    </>
  );
}

/// Files dropped anywhere on the window go to the Sign view.
function DropTarget() {
  const { t } = useTranslation();
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
      {t("app.drop_to_sign")}
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
  const { t } = useTranslation();
  const { status } = useAppStatus();
  const view = useView();
  const navigate = useNavigate();
  useShortcuts();

  if (status?.startup_error) {
    return (
      <main className="startup-error">
        <h1>{t("app.could_not_start")}</h1>
        <ErrorBox error={status.startup_error} />
      </main>
    );
  }

  const Current = (NAV.find((n) => n.view === view) ?? NAV[0]).Component;
  return (
    <div className="app">
      <nav className="sidebar" aria-label={t("app.views")}>
        <div className="brand">
          <img src="./icon.svg" alt="" width={28} height={28} />
          <span>{t("app.name")}</span>
        </div>
        <ul>
          {NAV.map((n) => (
            <li key={n.view}>
              <button
                className={view === n.view ? "nav-item active" : "nav-item"}
                aria-current={view === n.view ? "page" : undefined}
                onClick={() => navigate(n.view)}
                title={n.key ? `Alt+${n.key}` : undefined}
              >
                {t(n.label)}
              </button>
            </li>
          ))}
        </ul>
        <div className="sidebar-footer">{status?.info ? `v${status.info.version}` : ""}</div>
      </nav>
      <div className="main">
        {/* The window's banner landmark: the partition, the badges and the notices under them
            (everything outside the sidebar and the view is in a landmark). */}
        <header>
          <div className="topbar">
            <CurrentPartition />
            <div className="topbar-badges">
              <KeygenIndicator />
              <HaWarningBadge />
              <VerificationBadge />
              <AuditBadge />
            </div>
          </div>
          <Notices />
        </header>
        <main className="content">{status === null ? <p className="muted">{t("app.starting")}</p> : <Current />}</main>
      </div>
      <Toasts />
      <DropTarget />
    </div>
  );
}
