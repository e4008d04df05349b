// The window: the sidebar (from the view table in ./nav.tsx), the top bar with the selected
// partition and the audit badges, notices, the current view, notifications, the drop target.
import { useEffect } from "react";
import { useTranslation } from "react-i18next";
import { ErrorBox, Toasts } from "./components";
import { NAV, VIEWS } from "./nav";
import { HaWarningBadge } from "./features/ha/HaBadges";
import { KeygenIndicator } from "./features/keys/KeygenIndicator";
import { StateProvider, useAppStatus, useNavigate, useView } from "./state";
import { AuditBadge, VerificationBadge, CurrentPartition, Notices } from "./TopBar";
import { DropTarget } from "./DropTarget";

export function App() {
  return (
    <StateProvider views={VIEWS}>
      <Shell />
    </StateProvider>
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
