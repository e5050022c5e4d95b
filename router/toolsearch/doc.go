// Package toolsearch finds tools by what they do: it ranks the tools of a
// registry against a request in plain words, for the search_tools tool,
// for the agents' [Catalog] and for the admin API's tool search.
//
// # What it reads
//
// The search reads the registry through [Registry], its own small
// interface: a sorted snapshot of the tools with the generation it is of,
// the generation alone (cheap, asked on every search) and a watch that
// signals changes. *router.Router implements it; the router does not
// import this package, and cmd/agents-mcp hands the router to [NewIndex],
// [NewCatalog] and [SearchLexical]. Each tool comes as an
// [agentsmcp.RegisteredTool], which the registry never modifies, so the
// index keeps what it derived from one by its address.
//
// # How it ranks
//
// An [Index] scores each tool with BM25 over four fields (the upstream
// prefix of its name, its name and title, its description, its
// parameters), with crude stemming, a table of synonyms and everyday
// intent phrases ("let Priya know" is sending a message), and scales the
// score by the share of the query's words a tool matches. With an
// [agentsmcp.Embedder] the ranking is hybrid: the lexical score is fused
// with the cosine similarity of the query's and the tool's embeddings, and
// an [agentsmcp.AligningEmbedder] re-ranks the best candidates by word
// alignment. Tool vectors are computed in the background, off the request
// path, by a goroutine the Index owns ([Index.Close] stops it), and cached
// by a hash of the embedder and the text. Until they are ready, or when the
// query cannot be embedded in time, a search answers lexically and says so
// in [Result.Note]: embedding never fails a search.
//
// The contract of a ranking, which search_tools, the agents and the admin
// API rely on:
//   - Results are best first, ties broken by name: the same catalog and
//     query give the same order.
//   - [Match.Score] only orders; [Match.Why] says in one line which query
//     words matched in which field (a synonym as "word→synonym"), and in
//     hybrid ranking the vector similarity and the word alignment.
//   - A [Ranker] ranks every tool of its registry. Keeping only the tools
//     the caller may use (agentsmcp.Principal.MayUseTool) is for the one
//     that answers the caller: search_tools and [Catalog] rank everything
//     for a restricted caller, drop the hidden tools, then apply the limit,
//     so a hidden tool is neither shown nor counted.
//
// # Where it grows
//
// The pieces are cut so that a larger catalog can be served without
// touching the router:
//   - A curated view of the registry (a subset, renamed tools) is a
//     [Registry] of its own, with an [Index] of its own.
//   - A ranking that weighs more than words (how reliable a tool is, what
//     served this kind of request for this caller) is a [Ranker] that wraps
//     an Index, re-orders its result and adds its reasons to Why; cmd hands
//     it to [AddSearchTools] and [NewCatalog] in place of the Index. It
//     reads the caller from the context and must not use other principals'
//     evidence where memory is private.
//   - A tool that returns the best tools with their input schemas, source,
//     health and why is [Catalog.SearchTools] offered as a tool, registered
//     on localtools as search_tools is.
package toolsearch
