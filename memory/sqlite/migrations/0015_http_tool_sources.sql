-- 0015: HTTP tool sources added at run time share upstream_definitions
-- with the upstream MCP servers (UpstreamDefinition.Kind in the root
-- package): both prefix their tools with their name, so one primary key
-- keeps a name to one provider of either kind. Rows from before are MCP
-- upstreams. The list of one kind reads the (kind, name) index, so a
-- replica polling its MCP upstreams never reads the HTTP sources' configs,
-- which may hold an OpenAPI document of a few MiB.
ALTER TABLE upstream_definitions ADD COLUMN kind TEXT NOT NULL DEFAULT 'mcp';
CREATE INDEX upstream_definitions_kind ON upstream_definitions (kind, name);
