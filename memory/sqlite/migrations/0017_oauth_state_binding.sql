-- 0017: an authorization flow is bound to the browser that started it
-- (OAuthState.Binding in the root package, ADR 0012 D2): binding is the
-- hash of a nonce that browser holds in a cookie, '' for a link that no
-- browser has opened yet. Rows from before have '' and are refused by the
-- callback: their person starts again.
ALTER TABLE oauth_states ADD COLUMN binding TEXT NOT NULL DEFAULT '';
