package agents

import (
	"embed"
	"strings"
	"text/template"
)

// The prompts are versioned files embedded in the binary: a change of
// wording is a new version, so that a learning or a test can name the
// prompt it came from. v2 shows tool reliability (estimate, streak,
// cool-down) and the task family; v3 adds why each candidate matched, the
// values the request gives for each tool (composed or asked), the values
// every plan must use and the family joined. v1 and v2 are kept for
// reference.
//
//go:embed prompts/*.txt
var promptFiles embed.FS

// PromptVersion names the prompt set in use.
const PromptVersion = "v3"

func promptText(name string) string {
	b, err := promptFiles.ReadFile("prompts/" + name + "." + PromptVersion + ".txt")
	if err != nil {
		panic("agents: missing embedded prompt " + name) // a build defect, caught by every test
	}
	return strings.TrimSpace(string(b))
}

var (
	thoughtSystemPrompt = promptText("thought")
	planSystemPrompt    = promptText("plan")
	repairPrompt        = promptText("repair")
	thoughtContext      = template.Must(template.New("thought").Parse(promptText("thought-context")))
	planContext         = template.Must(template.New("plan").Parse(promptText("plan-context")))
	stepRepairPrompt    = promptText("step-repair")
	stepRepairContext   = template.Must(template.New("step-repair").Parse(promptText("step-repair-context")))
)

func render(t *template.Template, data any) string {
	var sb strings.Builder
	if err := t.Execute(&sb, data); err != nil {
		return "(context unavailable: " + err.Error() + ")"
	}
	return sb.String()
}
