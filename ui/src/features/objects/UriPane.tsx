// An object's PKCS#11 URI and the command lines of outside tools that use it.
import { useEffect } from "react";
import { useTranslation } from "react-i18next";
import type { ToolCommand } from "../../bindings";
import { ErrorBox } from "../../components";
import { textOf } from "../../i18n";
import { api } from "../../ipc";
import { useToast } from "../../state";
import { useCommand } from "../../useCommand";
import { copyText } from "./CertificatePane";

/// The object's PKCS#11 URI with Copy, and for a private key "Use this key from…".
export function UriPane({ partitionId, handle }: { partitionId: string; handle: number }) {
  const { t } = useTranslation();
  const toast = useToast();
  const { run: load, data: u, error } = useCommand(api.objectUri);
  useEffect(() => {
    void load(partitionId, handle);
  }, [load, partitionId, handle]);
  const copy = (text: string) =>
    void copyText(text).then(
      () => toast("ok", t("objects.copied")),
      () => toast("error", t("objects.clipboard_refused")),
    );
  if (error) return <ErrorBox error={error} />;
  if (!u) return null;
  return (
    <section className="uri" data-testid="uri-pane">
      <h3>{t("objects.uri_heading")}</h3>
      <p>
        <code className="hex" data-testid="object-uri">
          {u.uri}
        </code>{" "}
        <button onClick={() => copy(u.uri)} data-testid="copy-uri">
          {t("objects.copy")}
        </button>
      </p>
      <p className="muted small">
        {t("objects.token")} <code>{u.token_uri}</code> <button onClick={() => copy(u.token_uri)}>{t("objects.copy")}</button>
      </p>
      {u.commands.length > 0 && (
        <details data-testid="use-key-from">
          <summary>{t("objects.use_key_from")}</summary>
          <p className="muted small">{t("uris.pin_file_note")}</p>
          {u.commands.map((c) => (
            <ToolLine key={c.tool} partitionId={partitionId} handle={handle} line={c} copy={copy} />
          ))}
        </details>
      )}
    </section>
  );
}

/// One tool's line with Copy and "Test this line": the console runs it against a throwaway
/// file with the session's PIN (never shown) and shows the tools' own verdict.
export function ToolLine({
  partitionId,
  handle,
  line: c,
  copy,
}: {
  partitionId: string;
  handle: number;
  line: ToolCommand;
  copy: (text: string) => void;
}) {
  const { t } = useTranslation();
  const { run, data: v, error, loading } = useCommand(api.tryToolLine);
  return (
    <div data-testid="tool-line" data-tool={c.tool}>
      <p>
        <strong>{c.tool}</strong> <span className="muted small">— {textOf(c.purpose)}</span>{" "}
        <button onClick={() => copy(c.command)}>{t("objects.copy")}</button>{" "}
        <button
          onClick={() => void run(partitionId, handle, c.tool)}
          disabled={loading}
          aria-busy={loading}
          title={t("objects.test_line_hint")}
          data-testid="test-line"
        >
          {loading ? t("objects.testing_line") : t("objects.test_line")}
        </button>
      </p>
      {c.caveat && (
        <p className="warn small" role="note" data-testid="tool-caveat">
          {textOf(c.caveat)}
        </p>
      )}
      <pre className="pem">{c.command}</pre>
      {c.verify && (
        <>
          <p className="muted small">{t("uris.then_check")}</p>
          <pre className="pem">{c.verify}</pre>
        </>
      )}
      <div aria-live="polite">
        {error && <ErrorBox error={error} />}
        {v && !loading && (
          <div data-testid="trial-verdict" data-ok={String(v.ok)}>
            <p className={v.ok ? "ok" : "warn"} role="status">
              <strong>{v.ok ? t("objects.trial_ok") : t("objects.trial_failed")}</strong>
            </p>
            {v.steps.map((s) => (
              <div key={s.command}>
                <p className="muted small">
                  <code>{s.command.split("\n").pop()}</code> —{" "}
                  {s.exit_code === null ? t("objects.trial_stopped") : t("objects.trial_exit", { code: s.exit_code })}
                </p>
                {s.output && <pre className="pem">{s.output}</pre>}
              </div>
            ))}
          </div>
        )}
      </div>
    </div>
  );
}
