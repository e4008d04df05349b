// The attribute editor: label, ID, start/end dates and the booleans the object allows to
// change (CKA_MODIFIABLE and PKCS#11's rules: sensitive can be set, never unset; extractable
// unset, never set). A new ID moves the pair's other half and its certificates along.
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { textOf } from "../../i18n";
import type { AttributesChanged, FlagChange } from "../../bindings";
import { Dialog, ErrorBox, Field } from "../../components";
import { api } from "../../ipc";
import { useCommand } from "../../useCommand";

export function AttributesDialog({
  partitionId,
  handle,
  onClose,
  onChanged,
}: {
  partitionId: string;
  handle: number;
  onClose: () => void;
  onChanged: (r: AttributesChanged) => void;
}) {
  const { t } = useTranslation();
  const { run: load, data: a, error: loadError } = useCommand(api.editableAttributes);
  const [label, setLabel] = useState<string | null>(null);
  const [id, setId] = useState<string | null>(null);
  const [start, setStart] = useState<string | null>(null);
  const [end, setEnd] = useState<string | null>(null);
  const [flags, setFlags] = useState<Record<string, boolean>>({});
  useEffect(() => {
    void load(partitionId, handle);
  }, [load, partitionId, handle]);
  const {
    run: save,
    loading,
    error,
  } = useCommand(async () => {
    if (!a) return;
    const changed: FlagChange[] = Object.entries(flags)
      .filter(([n, v]) => a.flags.find((f) => f.name === n)?.value !== v)
      .map(([name, value]) => ({ name, value }));
    const r = await api.setAttributes(partitionId, handle, {
      label: label !== null && label !== a.label ? label : null,
      id_hex: id !== null && id !== a.id_hex ? id : null,
      start_date: start !== null && start !== (a.start_date ?? "") ? start : null,
      end_date: end !== null && end !== (a.end_date ?? "") ? end : null,
      flags: changed,
    });
    onChanged(r);
    onClose();
  });
  if (loadError)
    return (
      <Dialog title={t("attributes.title")} onClose={onClose}>
        <ErrorBox error={loadError} />
      </Dialog>
    );
  if (!a) return null;
  const disabled = !a.modifiable;
  return (
    <Dialog title={t("attributes.title_of", { label: a.label || a.id_hex })} onClose={onClose} wide>
      {!a.modifiable && <div className="notice">{t("attributes.not_modifiable")}</div>}
      <Field label={t("attributes.label")}>
        <input
          type="text"
          value={label ?? a.label}
          onChange={(e) => setLabel(e.target.value)}
          disabled={disabled}
          aria-label={t("attributes.label")}
          data-testid="attr-label"
        />
      </Field>
      <Field
        label={t("attributes.id_hex")}
        hint={a.related.length ? t("attributes.moves_along", { list: a.related.join(", ") }) : undefined}
      >
        <input
          type="text"
          value={id ?? a.id_hex}
          onChange={(e) => setId(e.target.value)}
          disabled={disabled}
          aria-label="ID"
          data-testid="attr-id"
        />
      </Field>
      <Field label={t("attributes.start_date")} hint={t("attributes.date_hint")}>
        <input
          type="text"
          value={start ?? a.start_date ?? ""}
          onChange={(e) => setStart(e.target.value)}
          disabled={disabled}
          aria-label={t("attributes.start_date")}
        />
      </Field>
      <Field label={t("attributes.end_date")} hint={t("attributes.date_hint")}>
        <input
          type="text"
          value={end ?? a.end_date ?? ""}
          onChange={(e) => setEnd(e.target.value)}
          disabled={disabled}
          aria-label={t("attributes.end_date")}
        />
      </Field>
      {a.flags.length > 0 && (
        <fieldset>
          <legend>{t("attributes.flags")}</legend>
          {a.flags.map((f) => (
            <label className="checkbox" key={f.name} title={f.reason ? textOf(f.reason) : undefined}>
              <input
                type="checkbox"
                checked={flags[f.name] ?? f.value}
                disabled={!f.changeable}
                onChange={(e) => setFlags((x) => ({ ...x, [f.name]: e.target.checked }))}
                data-testid={`attr-flag-${f.name}`}
              />{" "}
              {f.name}
              {f.reason && <span className="muted small"> — {textOf(f.reason)}</span>}
            </label>
          ))}
        </fieldset>
      )}
      <div className="button-row">
        <button className="primary" onClick={() => void save()} disabled={loading || disabled} data-testid="attr-save">
          {t("attributes.save")}
        </button>
        <button onClick={onClose}>{t("common.cancel")}</button>
      </div>
      {error && <ErrorBox error={error} />}
    </Dialog>
  );
}
