package router

// KnownMethodsForTest exposes the guard's method table to the external tests.
func KnownMethodsForTest() map[string]string {
	out := map[string]string{}
	for m, k := range knownMethods {
		if k == callMethod {
			out[m] = "call"
		} else {
			out[m] = "notification"
		}
	}
	return out
}
