#!/usr/bin/env bash
# rootsplit.sh: the identifier rewrites that moved behaviour out of the root
# package (package agentsmcp) into packages with one job each. The moves of
# code themselves are in the branch's commits; what this script holds is the
# part that must be re-run over code written meanwhile on other branches:
# every use of a moved name, qualified by its old package, is rewritten to
# the new one, and goimports adds the import.
#
# Usage: scripts/dev/rootsplit.sh [step...]   (default: every step, in order)
# Each step is idempotent: run it again after a merge to rewrite the new
# uses. It only touches .go files outside the packages that define the names.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"

MOD=github.com/agents-mcp/agents-mcp
GOIMPORTS=${GOIMPORTS:-go run golang.org/x/tools/cmd/goimports@v0.52.0}

# rewrite PKGDIR OLDQUAL NEWQUAL IMPORT 'Old=New' ...: in every .go file of
# the module outside PKGDIR, OLDQUAL.Old becomes NEWQUAL.New; files changed
# get IMPORT (goimports removes an import left unused).
rewrite() {
	local pkgdir=$1 old=$2 new=$3 imp=$4
	shift 4
	local expr=() pair
	for pair in "$@"; do
		expr+=(-e "s/\\b${old}\\.${pair%%=*}\\b/${new}.${pair#*=}/g")
	done
	local files
	files=$(git ls-files '*.go' | grep -v "^${pkgdir}/[^/]*\.go$" |
		xargs grep -lE "\\b${old}\\.($(printf '%s|' "${@%%=*}" | sed 's/|$//'))\\b" || true)
	[ -n "$files" ] || return 0
	# shellcheck disable=SC2086
	sed -i "${expr[@]}" $files
	for f in $files; do
		grep -q "\"$imp\"" "$f" && continue
		[ "$imp" = "$MOD" ] && continue # goimports adds the root as agentsmcp
		if grep -q "^[[:space:]]agentsmcp \"$MOD\"$" "$f"; then # same group as the root's import
			sed -i "s|^\tagentsmcp \"$MOD\"$|&\n\t\"$imp\"|" "$f"
		else
			sed -i "0,/^import (/s||import (\n\t\"$imp\"|" "$f"
		fi
	done
	# shellcheck disable=SC2086
	$GOIMPORTS -w $files
}

# rename_in PKGDIR 'Old=New' ...: unqualified renames inside the package that
# now defines the names (its own files, tests included).
rename_in() {
	local pkgdir=$1
	shift
	local expr=() pair
	for pair in "$@"; do
		expr+=(-e "s/\\b${pair%%=*}\\b/${pair#*=}/g")
	done
	sed -i "${expr[@]}" "$pkgdir"/*.go
}

# Redaction: the root's redact.go, url.go and secret.go (but for the views
# Task.Redacted, Plan.Redacted, Thought.Redacted, which stay on the types,
# RedactError, which stays with Error, and CheckHTTPURL) are now
# internal/redact, a leaf of the standard library only.
REDACT_NAMES=(
	RedactArguments=Arguments RedactText=Text RedactConnectionString=ConnectionString
	RedactURL=URL RedactMessage=Message RedactNamed=Named RedactSecrets=Secrets
	IsSecretName=IsSecretName HasSecret=HasSecret EditSecrets=EditSecrets
	Redacted=Marker
	ServerMessage=ServerMessage QuoteMessage=QuoteMessage MaxQuotedMessageBytes=MaxQuotedMessageBytes
)
# The move itself (done once, in the commit "root: redaction moves to
# internal/redact"): git mv of redact.go and its tests; url.go and
# secret.go split by hand; then inside internal/redact
#   rename_in internal/redact "${REDACT_NAMES[@]}" MaxAuditArgumentsBytes=MaxArgumentsBytes \
#     IDPattern=idPattern TruncateUTF8=truncateUTF8 agentsmcp=redact
# and in the root's files the same names, unqualified, became redact.X.
step_redact() {
	rewrite internal/redact agentsmcp redact "$MOD/internal/redact" "${REDACT_NAMES[@]}"
}

# Transport hints: rawresult.go, bridged.go and protocol.go are now
# internal/mcpwire, shared by router, remote and agents, with the MCP
# results of credential.go (AuthorizationRequiredResult, OfferAuthorization,
# AuthorizationRequiredFrom and their keys). The methods of a
# bridged call's task became functions of the task.
MCPWIRE_NAMES=(
	RawToolResult=RawToolResult WithRawToolResult=WithRawToolResult RawToolResultFrom=RawToolResultFrom
	QuietCaller=QuietCaller BridgedStepID=BridgedStepID BridgedQuestion=BridgedQuestion
	BridgedError=BridgedError ProtocolSessionless=ProtocolSessionless
	MetaAuthorizationRequired=MetaAuthorizationRequired AuthorizationRequiredResult=AuthorizationRequiredResult
	AuthorizeInputKey=AuthorizeInputKey OfferAuthorization=OfferAuthorization AuthorizationRequiredFrom=AuthorizationRequiredFrom
)
step_mcpwire() {
	local files
	files=$(git ls-files '*.go' | grep -v '^internal/mcpwire/' | grep -v '^[^/]*\.go$' |
		xargs grep -lE '\.(IsBridgedCall|OpenQuestion|BridgedAnswers|BridgedOutcome|AnswerBridged)\(' || true)
	if [ -n "$files" ]; then
		# shellcheck disable=SC2086
		sed -i -E -e 's/\b([A-Za-z_][A-Za-z0-9_]*)\.(IsBridgedCall|OpenQuestion|BridgedAnswers|BridgedOutcome)\(\)/mcpwire.\2(\1)/g' \
			-e 's/\b([A-Za-z_][A-Za-z0-9_]*)\.AnswerBridged\(/mcpwire.AnswerBridged(\1, /g' \
			-e 's/mcpwire\.AnswerBridged\(mcpwire, /mcpwire.AnswerBridged(/g' $files
		for f in $files; do
			grep -q "\"$MOD/internal/mcpwire\"" "$f" || sed -i "s|^[[:space:]]agentsmcp \"$MOD\"$|&\n\t\"$MOD/internal/mcpwire\"|" "$f"
		done
		# shellcheck disable=SC2086
		$GOIMPORTS -w $files
	fi
	rewrite internal/mcpwire agentsmcp mcpwire "$MOD/internal/mcpwire" "${MCPWIRE_NAMES[@]}"
}

# Revisions: every comparison of a revision with a date outside
# internal/mcpwire becomes a method of mcpwire.Revision.
REV_OPERAND='[A-Za-z_][A-Za-z0-9_.]*(\([A-Za-z0-9_.]*\))?'
SESSIONLESS='(agentsmcp\.ProtocolSessionless|mcpwire\.ProtocolSessionless|sessionlessRevision|MRTRProtocol|tasksProtocol|sessionlessVersion)'
step_revision() {
	local files
	files=$(git ls-files '*.go' | grep -v '^internal/mcpwire/' |
		xargs grep -lE "$REV_OPERAND (>=|<) ($SESSIONLESS\b|\"20[0-9]{2}-[0-9]{2}-[0-9]{2}\")" || true)
	[ -n "$files" ] || return 0
	# shellcheck disable=SC2086
	sed -i -E \
		-e "s/\b($REV_OPERAND) >= $SESSIONLESS\b/mcpwire.Revision(\1).Sessionless()/g" \
		-e "s/\b($REV_OPERAND) < $SESSIONLESS\b/!mcpwire.Revision(\1).Sessionless()/g" \
		-e "s/\b($REV_OPERAND) >= \"2025-06-18\"/!mcpwire.Revision(\1).Batches()/g" \
		-e "s/\b($REV_OPERAND) != \"\" \&\& \1 < \"2025-06-18\"/mcpwire.Revision(\1).Legacy()/g" \
		-e "s/\b($REV_OPERAND) >= \"2025-11-25\"/mcpwire.Revision(\1).Primes()/g" \
		$files
	for f in $files; do
		grep -q "\"$MOD/internal/mcpwire\"" "$f" || sed -i "s|^[[:space:]]agentsmcp \"$MOD\"$|&\n\t\"$MOD/internal/mcpwire\"|" "$f"
	done
	# shellcheck disable=SC2086
	$GOIMPORTS -w $files
}

# One name for the upstream definition: remote's aliases Config,
# ToolFilter and ConfigProblem of the root's types are gone.
REMOTE_ALIASES=(Config=UpstreamConfig ToolFilter=UpstreamToolFilter ConfigProblem=UpstreamConfigProblem)
step_vocabulary() {
	local pair files
	# Inside remote, unqualified (not a field, a key, a method or a doc
	# link's method), once the alias declarations are gone.
	sed -i -E '/^\t(\/\/ )?(Config|ToolFilter|ConfigProblem)\b.*(agentsmcp\.Upstream|\[agentsmcp)/d' remote/config.go
	sed -i -z 's/\ntype (\n)\n//' remote/config.go
	files=$(ls remote/*.go)
	for pair in "${REMOTE_ALIASES[@]}"; do
		# shellcheck disable=SC2086
		sed -i -E "s/(^|[^.A-Za-z0-9_\"])${pair%%=*}\b([^:(]|$)/\1agentsmcp.${pair#*=}\2/g" $files
	done
	# shellcheck disable=SC2086
	$GOIMPORTS -w $files
	rewrite - remote agentsmcp "$MOD" "${REMOTE_ALIASES[@]}" # remote_test files too
}

steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(redact mcpwire revision vocabulary)
for s in "${steps[@]}"; do
	"step_$s"
done
