// What the views show about an outcome or a state: the backend's error, an empty place, a
// badge, the progress of a job.
import type { ReactNode } from "react";
import { Trans, useTranslation } from "react-i18next";
import type { ApiError } from "../bindings";
import { errorTexts, formatter } from "../i18n";

/// An error as the backend describes it: what happened, details, what to do, the PKCS#11
/// call. The message and suggestion in the window's language when the backend gave keys.
export function ErrorBox({ error, title }: { error: ApiError; title?: string }) {
  const { t } = useTranslation();
  const { message, suggestion, details } = errorTexts(error);
  return (
    <div className="error-box" role="alert" data-code={error.code}>
      <strong>
        {title ? `${title}: ` : ""}
        {message}
      </strong>
      {details && <p>{details}</p>}
      {suggestion && <p className="suggestion">{t("common.what_to_do", { suggestion })}</p>}
      {error.pkcs11 && (
        <p className="pkcs11">
          <Trans
            i18nKey="common.pkcs11_returned"
            values={{
              function: error.pkcs11.function,
              name: error.pkcs11.name,
              code: `0x${error.pkcs11.code.toString(16).toUpperCase().padStart(8, "0")}`,
            }}
            components={[<code key="f" />, <code key="n" />]}
          />
        </p>
      )}
    </div>
  );
}

export function EmptyState({ title, children, action }: { title: string; children?: ReactNode; action?: ReactNode }) {
  return (
    <div className="empty-state">
      <h2>{title}</h2>
      {children && <p>{children}</p>}
      {action}
    </div>
  );
}

export function Badge({
  tone = "neutral",
  children,
  title,
}: {
  tone?: "neutral" | "ok" | "warn" | "bad" | "info";
  children: ReactNode;
  title?: string;
}) {
  return (
    <span className={`badge badge-${tone}`} title={title}>
      {children}
    </span>
  );
}

export function ProgressBar({ done, total, label }: { done: number; total: number; label?: string }) {
  const { t } = useTranslation();
  const fmt = formatter();
  const pct = total > 0 ? Math.min(100, Math.round((done / total) * 100)) : 0;
  return (
    <div
      className="progress"
      role="progressbar"
      aria-valuemin={0}
      aria-valuemax={total || 100}
      aria-valuenow={done}
      aria-label={label ?? t("common.progress")}
    >
      <div className="progress-fill" style={{ width: `${total > 0 ? pct : 100}%` }} data-indeterminate={total <= 0 ? "true" : undefined} />
      <span className="progress-text">
        {label ?? (total > 0 ? `${fmt.number(done)} / ${fmt.number(total)} (${pct}%)` : t("common.working"))}
      </span>
    </div>
  );
}
