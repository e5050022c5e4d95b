-- 0013: credentials and the OAuth flows under way (credential.go in the
-- root package). Conventions as in 0001: times are INTEGER unix
-- milliseconds (0: none).
--
-- A credential's secret part is only ever stored sealed (sealed, by
-- memory/secrets): no column holds a secret in clear. settings holds the
-- parts that are not secret as JSON. At most one credential exists per
-- (integration, principal); principal is '' for a shared one. The unique
-- key also serves the lookup of a call and the list, in that order.
CREATE TABLE credentials (
    id          TEXT    PRIMARY KEY,
    integration TEXT    NOT NULL,
    principal   TEXT    NOT NULL,
    kind        TEXT    NOT NULL,
    settings    TEXT    NOT NULL,
    sealed      TEXT    NOT NULL,
    expires_at  INTEGER NOT NULL,
    created_by  TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    UNIQUE (integration, principal)
);

-- One row per authorization-code flow under way, keyed by a hash of its
-- state parameter; taken (deleted) once by the callback. verifier_sealed
-- is the PKCE code verifier, sealed.
CREATE TABLE oauth_states (
    state_key       TEXT    PRIMARY KEY,
    credential_id   TEXT    NOT NULL,
    principal       TEXT    NOT NULL,
    verifier_sealed TEXT    NOT NULL,
    expires_at      INTEGER NOT NULL
);
