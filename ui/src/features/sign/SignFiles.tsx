// The files of a batch: each one's size, what was found wrong with it, its progress while
// signing and, after, its outputs.
import { useTranslation } from "react-i18next";
import type { FileCheck, SignReport } from "../../bindings";
import { Badge, EmptyState, ProgressBar } from "../../components";
import { errorTexts, textOf, useFormat } from "../../i18n";

export type FileState = { stage: "waiting" | "hashing" | "signing" | "done" | "failed"; done: number; total: number; message?: string };

export function SignFiles({
  files,
  checks,
  progress,
  report,
  busy,
  onRemove,
}: {
  files: string[];
  checks: FileCheck[];
  progress: Record<number, FileState>;
  report: SignReport | null;
  busy: boolean;
  onRemove: (index: number) => void;
}) {
  const { t } = useTranslation();
  const fmt = useFormat();
  return (
    <section className="card drop-zone" data-testid="drop-zone">
      {files.length === 0 ? (
        <EmptyState title={t("sign.drop_title")}>{t("sign.drop_text")}</EmptyState>
      ) : (
        <table className="table compact" data-testid="sign-files">
          <thead>
            <tr>
              <th>{t("sign.col_file")}</th>
              <th>{t("sign.col_size")}</th>
              <th>{t("audit.col_status")}</th>
              <th>
                <span className="sr-only">{t("connections.remove")}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {files.map((f, i) => {
              const c = checks[i];
              const pr = progress[i];
              const out = report?.files[i];
              return (
                <tr
                  key={`${f}-${i}`}
                  data-testid="sign-file"
                  data-name={c?.name ?? f}
                  data-state={c?.problem ? "problem" : out?.error ? "failed" : out?.outputs.length ? "signed" : (pr?.stage ?? "ready")}
                >
                  <td>
                    <strong>{c?.name ?? f}</strong>
                    <div className="muted small">{f}</div>
                    {out?.sha256 && <div className="mono small">SHA-256 {out.sha256}</div>}
                  </td>
                  <td>{fmt.bytes(c?.size ?? null)}</td>
                  <td className="status-cell">
                    {c?.problem ? (
                      <span className="bad-text">{c.problem_text ? textOf(c.problem_text) : c.problem}</span>
                    ) : out?.error ? (
                      <span className="bad-text">
                        {out.failed_key && `${out.failed_key}: `}
                        {errorTexts(out.error).message}
                      </span>
                    ) : out && out.outputs.length ? (
                      <div>
                        {out.outputs.map((o) => (
                          <div key={o.path} className="small">
                            <Badge tone="ok">{o.format}</Badge> {o.path}{" "}
                            {o.signed_by.length > 1 && <span data-testid="signed-by">({o.signed_by.join(" + ")}) </span>}
                            {o.verified && <span className="muted">{t("sign.verified")}</span>}
                          </div>
                        ))}
                        {out.unstamped && (
                          <div className="small warn-text" data-testid="sign-unstamped">
                            {textOf(out.unstamped)}
                          </div>
                        )}
                      </div>
                    ) : pr ? (
                      pr.stage === "hashing" ? (
                        <ProgressBar
                          done={pr.done}
                          total={pr.total}
                          label={t("sign.hashing", { pct: Math.round((100 * pr.done) / Math.max(1, pr.total)) })}
                        />
                      ) : pr.stage === "failed" ? (
                        <span className="bad-text">{pr.message}</span>
                      ) : (
                        <span>{t(`sign.stage_${pr.stage}`)}</span>
                      )
                    ) : (
                      <span className="muted">{t("sign.ready")}</span>
                    )}
                  </td>
                  <td>
                    <button
                      className="icon-button"
                      onClick={() => onRemove(i)}
                      disabled={busy}
                      aria-label={t("sign.remove_file", { name: c?.name ?? f })}
                    >
                      ×
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
