package virtual

import "context"

type viewKey struct{}

// WithView returns ctx carrying v, the view a request to a virtual server
// is served in, so that whatever answers it with names of the catalog (the
// find tool, search_tools) can keep to the view's tools and give them the
// view's names and descriptions.
func WithView(ctx context.Context, v *View) context.Context {
	return context.WithValue(ctx, viewKey{}, v)
}

// ViewFrom returns the view in ctx, or nil for a request to the whole
// catalog.
func ViewFrom(ctx context.Context) *View {
	v, _ := ctx.Value(viewKey{}).(*View)
	return v
}

// Shows reports whether the tool of registry name real is seen in v: a
// nil view (the whole catalog) shows every tool.
func (v *View) Shows(real string) bool {
	if v == nil {
		return true
	}
	_, ok := v.tools[real]
	return ok
}
