# Shared helpers for the built-in policies: readable units in messages and small predicates.
# No rules (deny/warn/info) live here.
package streamwarden.lib

import rego.v1

# Largest unit first: a value is printed in the largest unit that divides it exactly.
_ms_units := [
	{"unit": "d", "size": 86400000},
	{"unit": "h", "size": 3600000},
	{"unit": "m", "size": 60000},
	{"unit": "s", "size": 1000},
]

_byte_units := [
	{"unit": "TiB", "size": 1099511627776},
	{"unit": "GiB", "size": 1073741824},
	{"unit": "MiB", "size": 1048576},
	{"unit": "KiB", "size": 1024},
]

# is_int(x): x is a whole number (JSON integers; 2.0 counts).
is_int(x) if {
	is_number(x)
	floor(x) == x
}

# fmt_ms(ms): a duration in milliseconds as the contract would write it:
# 90000 -> "90s", 600000 -> "10m", 7200000 -> "2h", 604800000 -> "7d", 1500 -> "1500ms", 0 -> "0s".
# Anything that is not a whole number is printed as it is.
fmt_ms(ms) := "0s" if {
	ms == 0
} else := out if {
	is_int(ms)
	fits := [u | some u in _ms_units; ms % u.size == 0]
	count(fits) > 0
	out := sprintf("%v%s", [ms / fits[0].size, fits[0].unit])
} else := out if {
	is_int(ms)
	out := sprintf("%vms", [ms])
} else := sprintf("%v", [ms])

# fmt_age(ms): a measured age or lag for a message, to the second, largest unit first:
# 396019 -> "6m36s", 2820000 -> "47m", 90061000 -> "1d1h1m1s", under a second -> "0s".
# (fmt_ms prints a contract value exactly as the contract would write it; an age is not one.)
fmt_age(ms) := "0s" if {
	ms < 1000
} else := concat("", [p |
	some u in [["d", 86400000, 1000000000000], ["h", 3600000, 24], ["m", 60000, 60], ["s", 1000, 60]]
	n := floor(ms / u[1]) % u[2]
	n > 0
	p := sprintf("%v%s", [n, u[0]])
])

# fmt_bytes(b): a size in bytes as the contract would write it:
# 1073741824 -> "1GiB", 53687091200 -> "50GiB", 1536 -> "1536B" (not a whole KiB count), 0 -> "0B".
fmt_bytes(b) := "0B" if {
	b == 0
} else := out if {
	is_int(b)
	fits := [u | some u in _byte_units; b % u.size == 0]
	count(fits) > 0
	out := sprintf("%v%s", [b / fits[0].size, fits[0].unit])
} else := out if {
	is_int(b)
	out := sprintf("%vB", [b])
} else := sprintf("%v", [b])

# blank(x): x is absent-like: not a string, or only whitespace.
blank(x) if not is_string(x)

blank(x) if {
	is_string(x)
	trim_space(x) == ""
}

# positive(x): x is a number above zero.
positive(x) if {
	is_number(x)
	x > 0
}

# quote(x): x for a message: strings in double quotes, anything else as written.
quote(x) := sprintf("%q", [x]) if {
	is_string(x)
} else := sprintf("%v", [x])

# first_index(pairs): for pairs [key, index], {key: the lowest index of that key}: "the first
# occurrence wins" in one sort, where a comprehension per key would cost the list's length squared
# (a 5,000-column schema).
first_index(pairs) := {p[0]: p[1] |
	s := sort(pairs)
	some k, p in s
	_first_in_sorted(s, k)
}

_first_in_sorted(_, k) if k == 0

_first_in_sorted(s, k) if {
	k > 0
	s[k - 1][0] != s[k][0]
}
