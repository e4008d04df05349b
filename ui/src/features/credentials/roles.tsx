// The roles' names in the window's language, what a role may do, and a button that says why
// it may not.
import { type ReactNode } from "react";
import type { Action, PartitionView, Permission, UserKind } from "../../bindings";
import i18n, { textOf } from "../../i18n";

/// The roles by kind, in the window's language (the login dialog's choices).
export function roleNames(): Record<UserKind, string> {
  const tr = i18n.t;
  return {
    user: tr("roles.user"),
    crypto_user: tr("roles.crypto_user"),
    limited_crypto_officer: tr("roles.limited_crypto_officer"),
    so: tr("roles.so"),
  };
}

/// The backend's role names (`PartitionView.role_name`, hsm::roles::Role::name) as the
/// catalogs have them; an unknown one as it came.
export const ROLE_NAME_KEYS = {
  "Partition Security Officer": "roles.partition_so",
  "security officer": "roles.security_officer",
  "Crypto Officer": "roles.crypto_officer",
  user: "roles.plain_user",
  "Crypto User": "roles.crypto_user",
  "Limited Crypto Officer": "roles.limited_crypto_officer",
} as const;

export function roleNameText(name: string | null | undefined): string {
  if (!name) return "";
  const key = ROLE_NAME_KEYS[name as keyof typeof ROLE_NAME_KEYS];
  return key ? i18n.t(key) : name;
}

export function permission(p: PartitionView | null, action: Action): Permission | undefined {
  return p?.permissions.find((x) => x.action === action);
}

/// A button for an action the role may or may not do: disabled with the reason shown.
export function RoleButton({
  perm,
  onClick,
  children,
  className,
  testId,
}: {
  perm: Permission | undefined;
  onClick: () => void;
  children: ReactNode;
  className?: string;
  testId?: string;
}) {
  const allowed = perm?.allowed ?? false;
  return (
    <span className="role-action">
      <button
        className={className}
        onClick={onClick}
        disabled={!allowed}
        title={perm?.reason ? textOf(perm.reason) : undefined}
        data-testid={testId}
      >
        {children}
      </button>
      {!allowed && perm?.reason && <span className="muted small role-reason">{textOf(perm.reason)}</span>}
    </span>
  );
}

/// An object class (`CKO_*` without the prefix, as the backend counts them) in words.
export function objectClassName(c: string): string {
  const tr = i18n.t;
  switch (c) {
    case "PRIVATE_KEY":
      return tr("credentials.class_private_key");
    case "PUBLIC_KEY":
      return tr("credentials.class_public_key");
    case "SECRET_KEY":
      return tr("credentials.class_secret_key");
    case "CERTIFICATE":
      return tr("credentials.class_certificate");
    case "DATA":
      return tr("credentials.class_data");
    default:
      return c.toLowerCase().replace(/_/g, " ");
  }
}
