// Small building blocks shared by the views.
import { useEffect, useRef, type ReactNode } from "react";
import { Trans, useTranslation } from "react-i18next";
import type { ApiError } from "./bindings";
import { errorTexts, formatter } from "./i18n";
import { useToasts } from "./state";

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

/// A modal dialog: focus moves in, Tab stays in, Escape closes, focus returns after.
export function Dialog({
  title,
  onClose,
  children,
  footer,
  wide,
}: {
  title: string;
  onClose: () => void;
  children: ReactNode;
  footer?: ReactNode;
  wide?: boolean;
}) {
  const { t } = useTranslation();
  const ref = useRef<HTMLDivElement>(null);
  // The latest onClose, read when a key is pressed: parents pass a new function on every
  // render, and re-running the focus effect on each would pull the focus out of the field
  // being typed in whenever anything in the window changes (an audit event, a refresh).
  const closeRef = useRef(onClose);
  useEffect(() => {
    closeRef.current = onClose;
  }, [onClose]);
  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    const el = ref.current;
    const first = el?.querySelector<HTMLElement>("input, select, textarea, button:not([data-close])");
    (first ?? el)?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") {
        e.stopPropagation();
        closeRef.current();
      }
      if (e.key === "Tab" && el) {
        const items = Array.from(
          el.querySelectorAll<HTMLElement>("button, input, select, textarea, [tabindex]:not([tabindex='-1'])"),
        ).filter((x) => !x.hasAttribute("disabled"));
        if (items.length === 0) return;
        const firstItem = items[0]!;
        const lastItem = items[items.length - 1]!;
        if (e.shiftKey && document.activeElement === firstItem) {
          e.preventDefault();
          lastItem.focus();
        } else if (!e.shiftKey && document.activeElement === lastItem) {
          e.preventDefault();
          firstItem.focus();
        }
      }
    };
    document.addEventListener("keydown", onKey, true);
    return () => {
      document.removeEventListener("keydown", onKey, true);
      before?.focus();
    };
  }, []);
  return (
    <div className="dialog-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div className={`dialog${wide ? " dialog-wide" : ""}`} role="dialog" aria-modal="true" aria-label={title} ref={ref} tabIndex={-1}>
        <header className="dialog-header">
          <h2>{title}</h2>
          <button className="icon-button" data-close onClick={onClose} aria-label={t("common.close")}>
            ×
          </button>
        </header>
        <div className="dialog-body">{children}</div>
        {footer && <footer className="dialog-footer">{footer}</footer>}
      </div>
    </div>
  );
}

export function Toasts() {
  const { t } = useTranslation();
  const { toasts, dismiss } = useToasts();
  return (
    <div className="toasts" aria-live="polite">
      {toasts.map((x) => (
        <div key={x.id} className={`toast toast-${x.kind}`} role={x.kind === "error" ? "alert" : "status"}>
          <div className="toast-body">
            <span>{x.text}</span>
            {x.error && <ErrorBox error={x.error} />}
          </div>
          <button className="icon-button" onClick={() => dismiss(x.id)} aria-label={t("common.dismiss")}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
}

export function Field({ label, children, hint }: { label: string; children: ReactNode; hint?: ReactNode }) {
  return (
    <label className="field">
      <span className="field-label">{label}</span>
      {children}
      {hint && <span className="field-hint">{hint}</span>}
    </label>
  );
}

/// A size in the window's language (see `useFormat().bytes`).
export function formatBytes(n: number | null | undefined): string {
  return formatter().bytes(n);
}
