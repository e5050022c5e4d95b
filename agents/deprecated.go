package agents

import "regexp"

// deprecatedPattern finds a tool description's word that the tool is
// deprecated: "DEPRECATED: Use read_text_file instead", "(deprecated)".
var deprecatedPattern = regexp.MustCompile(`(?i)\bdeprecated\b`)

// deprecatedWeight is how much a deprecated tool's score counts when the
// first plan weighs candidates (see bestTool): its upstream says another
// tool replaces it, and a person picks that one when it fits as well. It
// still serves when it is the one that fits.
const deprecatedWeight = 0.5

// toolWeight is deprecatedWeight for a tool whose description says it is
// deprecated, 1 for any other.
func toolWeight(description string) float64 {
	if deprecatedPattern.MatchString(description) {
		return deprecatedWeight
	}
	return 1
}
