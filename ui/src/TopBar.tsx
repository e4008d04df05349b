// The window's top bar: the selected partition and who is logged in, the audit trail's
// badges (its key, the last verification), and the notices under them.
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { Badge } from "./components";
import { useFormat } from "./i18n";
import { roleNameText } from "./features/credentials/roles";
import { useAppStatus, useAudit, useNavigate, usePartition } from "./state";

export function AuditBadge() {
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
export function VerificationBadge() {
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

export function CurrentPartition() {
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
export function Notices() {
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
