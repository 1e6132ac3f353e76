// The dashboard's people side: an account's owner (email, password), one-time sign-in links,
// server-side sessions and failed sign-in attempts (for rate limiting).
import { EntitySchema } from '@mikro-orm/core';

/** Who signs in to the dashboard for an account: one owner per account. */
export class AccountOwner {
  accountId!: string;
  /** Lower-cased; unique across accounts; null until the operator sets one. */
  email: string | null = null;
  /** PHC string `$scrypt$ln=…,r=…,p=…$salt$hash` (algorithm, parameters, salt, hash); null until the owner sets a password. */
  passwordHash: string | null = null;
  passwordChangedAt: Date | null = null;
  createdAt: Date = new Date();
}

export const AccountOwnerEntitySchema = new EntitySchema<AccountOwner>({
  class: AccountOwner,
  tableName: 'account_owners',
  properties: {
    accountId: { type: 'string', primary: true, length: 36 },
    email: { type: 'string', length: 254, nullable: true, unique: true },
    passwordHash: { type: 'string', length: 255, nullable: true },
    passwordChangedAt: { type: 'datetime', nullable: true },
    createdAt: { type: 'datetime' },
  },
});

/** A one-time sign-in link; only the SHA-256 of its token is stored. */
export class LoginLink {
  tokenHash!: string;
  accountId!: string;
  createdAt: Date = new Date();
  expiresAt!: Date;
  usedAt: Date | null = null;
}

export const LoginLinkEntitySchema = new EntitySchema<LoginLink>({
  class: LoginLink,
  tableName: 'login_links',
  indexes: [{ properties: ['expiresAt'] }],
  properties: {
    tokenHash: { type: 'string', primary: true, length: 64 },
    accountId: { type: 'string', length: 36 },
    createdAt: { type: 'datetime' },
    expiresAt: { type: 'datetime' },
    usedAt: { type: 'datetime', nullable: true },
  },
});

/**
 * A dashboard session, keyed by the SHA-256 of the cookie's token. Anonymous sessions (accountId
 * null) exist only to carry the CSRF token of the sign-in forms; signing in replaces them.
 */
export class DashboardSession {
  idHash!: string;
  accountId: string | null = null;
  /** Per-session CSRF token, sent back in every form. */
  csrfToken!: string;
  /** A one-time message shown on the next page (Post/Redirect/Get). */
  flash: string | null = null;
  createdAt: Date = new Date();
  expiresAt!: Date;
}

export const DashboardSessionEntitySchema = new EntitySchema<DashboardSession>({
  class: DashboardSession,
  tableName: 'dashboard_sessions',
  indexes: [{ properties: ['expiresAt'] }, { properties: ['accountId'] }],
  properties: {
    idHash: { type: 'string', primary: true, length: 64 },
    accountId: { type: 'string', length: 36, nullable: true },
    csrfToken: { type: 'string', length: 64 },
    flash: { type: 'text', nullable: true },
    createdAt: { type: 'datetime' },
    expiresAt: { type: 'datetime' },
  },
});

/** One failed sign-in, counted per bucket (`email:…`, `ip:…`) over a sliding window. */
export class SignInAttempt {
  id!: number;
  bucket!: string;
  createdAt: Date = new Date();
}

export const SignInAttemptEntitySchema = new EntitySchema<SignInAttempt>({
  class: SignInAttempt,
  tableName: 'sign_in_attempts',
  indexes: [{ properties: ['bucket', 'createdAt'] }],
  properties: {
    id: { type: 'integer', primary: true, autoincrement: true },
    bucket: { type: 'string', length: 300 },
    createdAt: { type: 'datetime' },
  },
});
