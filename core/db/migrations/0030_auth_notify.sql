-- hand-written below (no table changes: the triggers that tell every API node's credential cache
-- what changed; core/auth/cache.ts, notify mode, and docs/decisions.md "Verified-credential cache").
-- Any writer (a node's tool, another node, `crm admin`, raw SQL) that changes what authentication
-- reads (core/auth/authenticate.ts: the key or token row, its user, its organization) sends
-- `kind:id` on the channel crm_auth from inside its own transaction, so PostgreSQL delivers it at
-- commit and never for a rollback. o: an organization, u: a user, c: an API key or OAuth token (the
-- credential ids the cache keys on); '*' (a TRUNCATE) drops everything. Updates of other columns
-- (last_used_at, names, avatars) send nothing, so usage bookkeeping does not empty the caches.
CREATE FUNCTION crm_auth_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    PERFORM pg_notify('crm_auth', '*');
  ELSE
    PERFORM pg_notify('crm_auth', TG_ARGV[0] || ':' || OLD.id);
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER organizations_auth_update AFTER UPDATE ON organizations FOR EACH ROW
  WHEN ((OLD.plan, OLD.status, OLD.disabled_features) IS DISTINCT FROM (NEW.plan, NEW.status, NEW.disabled_features))
  EXECUTE FUNCTION crm_auth_notify('o');
--> statement-breakpoint
CREATE TRIGGER organizations_auth_delete AFTER DELETE ON organizations FOR EACH ROW
  EXECUTE FUNCTION crm_auth_notify('o');
--> statement-breakpoint
CREATE TRIGGER organizations_auth_truncate AFTER TRUNCATE ON organizations FOR EACH STATEMENT
  EXECUTE FUNCTION crm_auth_notify();
--> statement-breakpoint
CREATE TRIGGER users_auth_update AFTER UPDATE ON users FOR EACH ROW
  WHEN ((OLD.org_id, OLD.role, OLD.status, OLD.deleted_at) IS DISTINCT FROM (NEW.org_id, NEW.role, NEW.status, NEW.deleted_at))
  EXECUTE FUNCTION crm_auth_notify('u');
--> statement-breakpoint
CREATE TRIGGER users_auth_delete AFTER DELETE ON users FOR EACH ROW
  EXECUTE FUNCTION crm_auth_notify('u');
--> statement-breakpoint
CREATE TRIGGER users_auth_truncate AFTER TRUNCATE ON users FOR EACH STATEMENT
  EXECUTE FUNCTION crm_auth_notify();
--> statement-breakpoint
CREATE TRIGGER api_keys_auth_update AFTER UPDATE ON api_keys FOR EACH ROW
  WHEN ((OLD.org_id, OLD.user_id, OLD.token_hash, OLD.scopes, OLD.toolsets, OLD.revoked_at)
    IS DISTINCT FROM (NEW.org_id, NEW.user_id, NEW.token_hash, NEW.scopes, NEW.toolsets, NEW.revoked_at))
  EXECUTE FUNCTION crm_auth_notify('c');
--> statement-breakpoint
CREATE TRIGGER api_keys_auth_delete AFTER DELETE ON api_keys FOR EACH ROW
  EXECUTE FUNCTION crm_auth_notify('c');
--> statement-breakpoint
CREATE TRIGGER api_keys_auth_truncate AFTER TRUNCATE ON api_keys FOR EACH STATEMENT
  EXECUTE FUNCTION crm_auth_notify();
--> statement-breakpoint
CREATE TRIGGER oauth_tokens_auth_update AFTER UPDATE ON oauth_tokens FOR EACH ROW
  WHEN ((OLD.org_id, OLD.user_id, OLD.token_hash, OLD.scopes, OLD.resource, OLD.toolsets, OLD.expires_at, OLD.revoked_at)
    IS DISTINCT FROM (NEW.org_id, NEW.user_id, NEW.token_hash, NEW.scopes, NEW.resource, NEW.toolsets, NEW.expires_at, NEW.revoked_at))
  EXECUTE FUNCTION crm_auth_notify('c');
--> statement-breakpoint
CREATE TRIGGER oauth_tokens_auth_delete AFTER DELETE ON oauth_tokens FOR EACH ROW
  EXECUTE FUNCTION crm_auth_notify('c');
--> statement-breakpoint
CREATE TRIGGER oauth_tokens_auth_truncate AFTER TRUNCATE ON oauth_tokens FOR EACH STATEMENT
  EXECUTE FUNCTION crm_auth_notify();
