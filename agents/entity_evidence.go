package agents

// This file weighs the evidence a past request with the same entities
// gives (see addSameShapeTools) against a candidate the search ranks on
// weak evidence (see weakEvidence). "How do you say 'thank you' in
// Japanese?" shares no word with any tool; the search's reading of its
// meaning ranks "send an email message to an address" first (say, send)
// and "post a message to a chat channel" next (put, post), tools whose
// object the request never names and whose address or channel it does not
// give. A tool that served "Translate 'good morning' into French", a
// request with the same entities (a quoted text and a name), is the better
// bet: a request's verb, read by meaning alone, must not outrank a tool
// that requests of its shape were served by. The tool that served still
// has to take the request's effect; when it fails, the repair and the
// family's record take over as for any other.

// minEvidenceEntities is how many entities (a <date> aside) a request
// must have for the tool that served a request with the same ones to
// outrank a candidate on weak evidence: one name or one number is the
// shape of too many requests ("Tell Helena Berg by mail …" and a fare
// search's one code), as one value is too weak a sign for fittingTools;
// a quoted text and a name (what to say, and in which language) say more.
const minEvidenceEntities = 2

// servedSameEntities records that tool served query, a recent one-step
// request with the same entities as k's.
func (k *Knowledge) servedSameEntities(tool, query string) {
	if k.sameEntities == nil {
		k.sameEntities = map[string]string{}
	}
	k.sameEntities[tool] = query
}

// entityEvidence reports whether one of goal's usable candidates, not on
// cool-down, of an effect that serves want (one that sends when senders:
// see sendersOnly), served a request with the same entities: a candidate
// on weak evidence is then not picked (see bestTool).
func entityEvidence(k *Knowledge, goal string, want effect, senders bool) bool {
	if len(placeholdersOf(FamilyOf(k.Request))) < minEvidenceEntities {
		return false
	}
	for _, m := range k.Candidates[goal] {
		if _, ok := k.sameEntities[m.Name]; !ok {
			continue
		}
		f := k.Tools[m.Name]
		if f == nil {
			continue
		}
		has := toolEffects(f.Name, f.Description)
		if f.Usable() && !f.Reliability.CoolingDown && servesIntent(want, has) && (!senders || has&effectSend != 0) {
			return true
		}
	}
	return false
}

// outrankedByEntities reports whether f, a candidate of goal, gives way to
// a candidate that served a request with the same entities (evidenced, see
// entityEvidence): f did not serve one itself, its match rests on weak
// evidence, and the request's verb does not name what f does ("Send Marco
// Rossi an email …" names a mail tool's effect, whose address a lookup
// gives: that is no match by meaning alone).
func outrankedByEntities(k *Knowledge, f *ToolFacts, goal string, want effect, evidenced bool) bool {
	if !evidenced || want&toolEffects(f.Name, f.Description) != 0 {
		return false
	}
	if _, ok := k.sameEntities[f.Name]; ok {
		return false
	}
	return weakEvidence(f, goal)
}
