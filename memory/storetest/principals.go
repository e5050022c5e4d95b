package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// This file checks the creator recorded with thoughts, plans and tasks
// (their Principal fields): stored, filtered on, and never changed by an
// update.

func init() {
	suite["PrincipalTaskFilter"] = testPrincipalTaskFilter
	suite["PrincipalTaskKeptOnUpdate"] = testPrincipalTaskKeptOnUpdate
	suite["PrincipalPlanFilter"] = testPrincipalPlanFilter
	suite["PrincipalThoughtFilter"] = testPrincipalThoughtFilter
	suite["PrincipalInvalid"] = testPrincipalInvalid
}

var testPrincipals = []string{"key:aaaaaaaaaaaa", "key:bbbbbbbbbbbb", ""}

func testPrincipalTaskFilter(t *testing.T, s Services) {
	plan := agentsmcp.NewID(agentsmcp.PlanIDPrefix)
	statuses := []agentsmcp.TaskStatus{agentsmcp.TaskRunning, agentsmcp.TaskPaused}
	var all []*agentsmcp.Task
	for i := range 12 {
		tk := &agentsmcp.Task{Request: fmt.Sprint("task ", i), Status: statuses[i%2], CreatedAt: at(i / 2), Principal: testPrincipals[i%3]}
		if i%4 == 0 {
			tk.PlanID = plan
		}
		createTask(t, s, tk)
		all = append(all, tk)
	}
	key := func(tk *agentsmcp.Task) (time.Time, string) { return tk.CreatedAt, tk.ID }
	for _, f := range []agentsmcp.TaskFilter{
		{Principal: testPrincipals[0]},
		{Principal: testPrincipals[1], Status: agentsmcp.TaskPaused},
		{Principal: testPrincipals[0], PlanID: plan},
		{Principal: testPrincipals[0], PlanID: plan, Status: agentsmcp.TaskRunning},
		{Principal: "key:cccccccccccc"},
	} {
		var want []*agentsmcp.Task
		for _, tk := range all {
			if tk.Principal == f.Principal && (f.Status == "" || tk.Status == f.Status) && (f.PlanID == "" || tk.PlanID == f.PlanID) {
				want = append(want, tk)
			}
		}
		for _, limit := range []int{0, 2} {
			find := func(ctx context.Context, cursor string, limit int) ([]*agentsmcp.Task, string, error) {
				g := f
				g.Cursor, g.Limit = cursor, limit
				return s.Tasks.FindTasks(ctx, g)
			}
			if got := pageAll(t, find, limit, taskID); !slices.Equal(got, newestFirstIDs(want, key)) {
				t.Errorf("FindTasks(%+v) limit %d:\n got %v\nwant %v", f, limit, got, newestFirstIDs(want, key))
			}
		}
	}
	got, _, err := s.Tasks.FindTasks(t.Context(), agentsmcp.TaskFilter{Principal: testPrincipals[1]})
	if err != nil || len(got) == 0 {
		t.Fatalf("FindTasks by principal: %v, %d tasks", err, len(got))
	}
	for _, tk := range got {
		if tk.Principal != testPrincipals[1] {
			t.Errorf("task %s of principal %q listed for %q", tk.ID, tk.Principal, testPrincipals[1])
		}
	}
}

func testPrincipalTaskKeptOnUpdate(t *testing.T, s Services) {
	tk := &agentsmcp.Task{Request: "mine", Principal: testPrincipals[0], PrincipalTools: []string{"search_tools"}}
	createTask(t, s, tk)
	changed := *tk
	changed.Principal, changed.PrincipalTools, changed.Status = testPrincipals[1], nil, agentsmcp.TaskRunning
	if err := s.Tasks.UpdateTask(t.Context(), &changed); err != nil {
		t.Fatal(err)
	}
	got := findTask(t, s, tk.ID)
	if got.Principal != testPrincipals[0] || !slices.Equal(got.PrincipalTools, []string{"search_tools"}) {
		t.Errorf("after UpdateTask: principal %q tools %v, want the creator's %q %v", got.Principal, got.PrincipalTools, testPrincipals[0], tk.PrincipalTools)
	}
	leased, err := s.Tasks.AcquireTaskLease(t.Context(), tk.ID, "replica-2", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if leased.Principal != testPrincipals[0] || !slices.Equal(leased.PrincipalTools, []string{"search_tools"}) {
		t.Errorf("AcquireTaskLease returned principal %q tools %v", leased.Principal, leased.PrincipalTools)
	}
	resume, err := s.Tasks.FindTasksToResume(t.Context(), time.Now().Add(time.Hour), 10)
	if err != nil || len(resume) != 1 || resume[0].Principal != testPrincipals[0] {
		t.Errorf("FindTasksToResume: %v, %+v", err, resume)
	}
}

func testPrincipalPlanFilter(t *testing.T, s Services) {
	thought := agentsmcp.NewID(agentsmcp.ThoughtIDPrefix)
	var all []*agentsmcp.Plan
	for i := range 9 {
		p := fullPlan()
		p.CreatedAt, p.Principal = at(i), testPrincipals[i%3]
		if i%2 == 0 {
			p.ThoughtID = thought
		}
		if err := s.Plans.CreatePlan(t.Context(), &p); err != nil {
			t.Fatal(err)
		}
		all = append(all, &p)
	}
	got, err := s.Plans.FindPlanByID(t.Context(), all[1].ID)
	if err != nil || got.Principal != testPrincipals[1] {
		t.Fatalf("FindPlanByID: %v, principal %q", err, got.Principal)
	}
	key := func(p *agentsmcp.Plan) (time.Time, string) { return p.CreatedAt, p.ID }
	for _, f := range []agentsmcp.PlanFilter{{Principal: testPrincipals[0]}, {Principal: testPrincipals[1], ThoughtID: thought}} {
		var want []*agentsmcp.Plan
		for _, p := range all {
			if p.Principal == f.Principal && (f.ThoughtID == "" || p.ThoughtID == f.ThoughtID) {
				want = append(want, p)
			}
		}
		find := func(ctx context.Context, cursor string, limit int) ([]*agentsmcp.Plan, string, error) {
			g := f
			g.Cursor, g.Limit = cursor, limit
			return s.Plans.FindPlans(ctx, g)
		}
		if got := pageAll(t, find, 2, planID); !slices.Equal(got, newestFirstIDs(want, key)) {
			t.Errorf("FindPlans(%+v):\n got %v\nwant %v", f, got, newestFirstIDs(want, key))
		}
	}
}

func testPrincipalThoughtFilter(t *testing.T, s Services) {
	var all []*agentsmcp.Thought
	for i := range 9 {
		th := &agentsmcp.Thought{Request: fmt.Sprintf("summarise issues %d", i), CreatedAt: at(i), Principal: testPrincipals[i%3]}
		if err := s.Thoughts.CreateThought(t.Context(), th); err != nil {
			t.Fatal(err)
		}
		all = append(all, th)
	}
	got, err := s.Thoughts.FindThoughtByID(t.Context(), all[0].ID)
	if err != nil || got.Principal != testPrincipals[0] {
		t.Fatalf("FindThoughtByID: %v, principal %q", err, got.Principal)
	}
	key := func(th *agentsmcp.Thought) (time.Time, string) { return th.CreatedAt, th.ID }
	for _, f := range []agentsmcp.ThoughtFilter{{Principal: testPrincipals[1]}, {Principal: testPrincipals[0], Text: "issues"}} {
		var want []*agentsmcp.Thought
		for _, th := range all {
			if th.Principal == f.Principal {
				want = append(want, th)
			}
		}
		find := func(ctx context.Context, cursor string, limit int) ([]*agentsmcp.Thought, string, error) {
			g := f
			g.Cursor, g.Limit = cursor, limit
			return s.Thoughts.FindThoughts(ctx, g)
		}
		if got := pageAll(t, find, 2, thoughtID); !slices.Equal(got, newestFirstIDs(want, key)) {
			t.Errorf("FindThoughts(%+v):\n got %v\nwant %v", f, got, newestFirstIDs(want, key))
		}
	}
}

func testPrincipalInvalid(t *testing.T, s Services) {
	long := strings.Repeat("p", agentsmcp.MaxPrincipalIDBytes+1)
	err := s.Tasks.CreateTask(t.Context(), &agentsmcp.Task{Request: "x", Principal: long})
	wantCode(t, err, agentsmcp.EINVALID, "CreateTask(overlong principal)")
	err = s.Tasks.CreateTask(t.Context(), &agentsmcp.Task{Request: "x", Principal: "key:a", PrincipalTools: []string{""}})
	wantCode(t, err, agentsmcp.EINVALID, "CreateTask(empty allowlist pattern)")
	p := fullPlan()
	p.Principal = long
	wantCode(t, s.Plans.CreatePlan(t.Context(), &p), agentsmcp.EINVALID, "CreatePlan(overlong principal)")
	err = s.Thoughts.CreateThought(t.Context(), &agentsmcp.Thought{Request: "x", Principal: long})
	wantCode(t, err, agentsmcp.EINVALID, "CreateThought(overlong principal)")
}
