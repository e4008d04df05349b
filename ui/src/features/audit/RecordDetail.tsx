// One audit record in full, with the way to the key or the signed file it names.
import { useTranslation } from "react-i18next";
import type { RecordView } from "../../bindings";
import { useJumps } from "../../state";

export function keyIdOf(r: RecordView): string | null {
  try {
    const m = JSON.parse(r.metadata) as Record<string, unknown>;
    const id = m.key_id ?? m.id ?? (m.key as Record<string, unknown> | undefined)?.id;
    return typeof id === "string" && id ? id : null;
  } catch {
    return null;
  }
}

/// The signed file and its first signature, for a "sign" record.
export function signedFileOf(r: RecordView): { file: string; sig: string } | null {
  if (r.action !== "sign" || r.status !== "success") return null;
  try {
    const m = JSON.parse(r.metadata) as Record<string, unknown>;
    const outputs = Array.isArray(m.outputs) ? m.outputs.filter((o): o is string => typeof o === "string") : [];
    return typeof m.path === "string" && outputs[0] ? { file: m.path, sig: outputs[0] } : null;
  } catch {
    return null;
  }
}

export function RecordDetail({ r, onClose }: { r: RecordView; onClose: () => void }) {
  const { t } = useTranslation();
  const { showKeys, showVerify } = useJumps();
  const keyId = keyIdOf(r);
  const signed = signedFileOf(r);
  let meta = r.metadata;
  try {
    meta = JSON.stringify(JSON.parse(r.metadata), null, 2);
  } catch {
    /* shown as stored */
  }
  return (
    <aside className="detail-pane record-detail" data-testid="record-detail">
      <header className="card-header">
        <h2>{t("audit.record", { seq: r.seq })}</h2>
        <button className="icon-button" onClick={onClose} aria-label={t("audit.close_record")}>
          ×
        </button>
      </header>
      <dl className="info-grid">
        {(
          [
            [t("audit.col_time"), r.timestamp],
            [t("audit.col_action"), r.action],
            [t("audit.col_status"), r.status],
            [t("audit.col_resource"), `${r.resource_type}${r.resource_id ? `: ${r.resource_id}` : ""}`],
            [t("audit.col_algorithm"), r.algorithm ?? "—"],
            [t("audit.col_error_code"), r.error_code ?? "—"],
            [t("audit.col_actor"), `${r.actor_id ?? "?"} (${r.actor_ip})`],
            [t("audit.col_session"), r.session_id],
            [t("audit.col_epoch"), String(r.epoch)],
          ] as const
        ).map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
      <h3>{t("audit.chain_value")}</h3>
      <code className="hex">{r.hmac_chain}</code>
      <h3>{t("audit.metadata")}</h3>
      <pre className="meta">{meta}</pre>
      {keyId && (
        <button onClick={() => showKeys(keyId)} data-testid="record-key">
          {t("audit.show_key", { id: keyId.slice(0, 12) })}
        </button>
      )}
      {signed && (
        <button onClick={() => showVerify(signed)} data-testid="record-signed-file" title={signed.file}>
          {t("audit.check_signed_file")}
        </button>
      )}
    </aside>
  );
}
