// Initializing a token (the SO's, after the warning that every object on it goes).
import { useEffect, useState } from "react";
import { Trans, useTranslation } from "react-i18next";
import { Badge, Dialog, ErrorBox, Field } from "../../components";
import { api } from "../../ipc";
import { usePartitionActions, useToast } from "../../state";
import { useCommand } from "../../useCommand";
import { objectClassName } from "./roles";
import { useRefresh } from "./useRefresh";

/// Initialize the token: what it holds, the SO PIN, the new label, the old label typed, and
/// for the partition holding the audit trail's key, the second confirmation.
export function InitTokenDialog({ partitionId, onClose }: { partitionId: string; onClose: () => void }) {
  const { t } = useTranslation();
  const toast = useToast();
  const refresh = useRefresh();
  const { selectPartition } = usePartitionActions();
  const { run: load, data: contents, error: loadError } = useCommand(api.tokenContents);
  useEffect(() => {
    void load(partitionId);
  }, [load, partitionId]);
  const [soPin, setSoPin] = useState("");
  const [label, setLabel] = useState("");
  const [typed, setTyped] = useState("");
  const [auditToo, setAuditToo] = useState(false);
  const init = useCommand(async (pin: string) => {
    const r = await api.initToken(partitionId, pin, { label, confirmation: typed, destroy_audit_key: auditToo });
    toast("ok", t("credentials.initialized", { label: r.label, count: r.objects_destroyed }));
    if (r.partition_id) selectPartition(r.partition_id);
    await refresh();
    onClose();
  });
  const ready =
    contents !== null && soPin !== "" && label.trim() !== "" && typed === contents.confirmation && (!contents.holds_audit_key || auditToo);
  const submit = async () => {
    if (!ready) return;
    const pin = soPin;
    setSoPin("");
    await init.run(pin);
  };
  return (
    <Dialog
      title={t("credentials.init_title")}
      onClose={onClose}
      wide
      footer={
        <>
          <button onClick={onClose}>{t("common.cancel")}</button>
          <button className="danger" onClick={() => void submit()} disabled={init.loading || !ready} data-testid="init-token-submit">
            {init.loading ? t("credentials.initializing") : t("credentials.init_submit")}
          </button>
        </>
      }
    >
      {loadError && <ErrorBox error={loadError} />}
      {contents && (
        <>
          <p>
            <Trans
              i18nKey={
                contents.public_only && contents.reported_object_count === null ? "credentials.init_holds_public" : "credentials.init_holds"
              }
              values={{ label: contents.label, serial: contents.serial, n: contents.reported_object_count ?? contents.objects }}
              components={[<strong key="label" />, <strong key="count" data-testid="token-object-count" />]}
            />
          </p>
          {contents.by_class.length > 0 && (
            <ul className="delete-list">
              {contents.by_class.map((c) => (
                <li key={c.class}>
                  {c.count} × {objectClassName(c.class)}
                </li>
              ))}
            </ul>
          )}
          {contents.holds_audit_key && (
            <div className="notice warn" data-testid="audit-key-warning">
              <Badge tone="bad">{t("credentials.audit_trail")}</Badge> {t("credentials.holds_audit_key")}
              <label className="checkbox">
                <input type="checkbox" checked={auditToo} onChange={(e) => setAuditToo(e.target.checked)} data-testid="destroy-audit-key" />{" "}
                {t("credentials.destroy_audit_key")}
              </label>
            </div>
          )}
          <Field label={t("credentials.so_pin")}>
            <input
              type="password"
              autoComplete="off"
              value={soPin}
              onChange={(e) => setSoPin(e.target.value)}
              aria-label={t("credentials.so_pin")}
            />
          </Field>
          <Field label={t("credentials.new_label")} hint={t("credentials.new_label_hint")}>
            <input
              type="text"
              value={label}
              onChange={(e) => setLabel(e.target.value)}
              aria-label={t("credentials.new_label")}
              maxLength={32}
            />
          </Field>
          <Field label={t("credentials.type_to_confirm", { confirmation: contents.confirmation })}>
            <input
              type="text"
              value={typed}
              onChange={(e) => setTyped(e.target.value)}
              autoComplete="off"
              spellCheck={false}
              aria-label={t("credentials.confirmation")}
              data-testid="init-confirm"
            />
          </Field>
        </>
      )}
      {init.error && <ErrorBox error={init.error} title={t("credentials.not_initialized")} />}
    </Dialog>
  );
}
