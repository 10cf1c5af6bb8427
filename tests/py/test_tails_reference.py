"""Certified percentiles (src/results/tails.c) against an independent
reference: scipy.special.betainc for the regularised incomplete beta
function, exact binomial sums in integers (math.comb, fractions) where a
decision sits within floating-point reach of its threshold, and MLPerf
LoadGen's own characterisation of the rule (n >= h_min(t) + t, h_min found
by its own search). 10,000 random rule cases, 2,000 server-rule and mirror
decisions, 2,000 beta values, and 1,000 quantiles of Student's t (the
frontier's intervals, against scipy.stats.t); seeded, so a failure
reproduces."""
import os
import random
import subprocess
import sys
from fractions import Fraction
from math import comb

from scipy.special import betainc
from scipy.stats import t as student_t

BUILD = os.environ.get("PERFGATE_BUILD", os.path.join(os.path.dirname(__file__), "..", "..", "build"))
HELPER = os.path.join(BUILD, "tests", "tails-cases")

# MLPerf's published floors (inference_rules.adoc; the research note
# re-derives them): p -> (h_min(0), fewest samples with an estimate)
TABLE = {"0.5": (7, 11), "0.75": (17, 24), "0.9": (44, 64), "0.95": (90, 130),
         "0.99": (459, 662), "0.999": (4603, 6636)}


def exact_cdf(n, t, p, c):
    """P(Binomial(n, 1 - p) <= t) <= 1 - c, in integers: p = a/b exactly."""
    p, c = Fraction(p), Fraction(c)
    a, b = p.numerator, p.denominator
    q = b - a
    # term_k = C(n, k) q^k a^(n-k); the sum over k <= t against (1 - c) b^n
    total, term = 0, a ** n
    for k in range(t + 1):
        total += term
        if k < n:
            term = term * (n - k) * q // ((k + 1) * a) if a else 0
    return total * c.denominator <= (c.denominator - c.numerator) * b ** n


def exact_term_check():
    # the recurrence must give exact binomial terms
    assert exact_cdf(10, 10, "0.3", "0.5") is False
    n, t, p = 50, 3, Fraction("0.9")
    want = sum(comb(n, k) * (1 - p) ** k * p ** (n - k) for k in range(t + 1))
    assert (want <= Fraction(1, 100)) == exact_cdf(n, t, "0.9", "0.99")


def below(a, b, x, limit):
    """I_x(a, b) <= limit, exactly when it matters: scipy unless the value is
    within 1e-9 (relative) of the limit, then the exact integer sum (a, b
    integers: I_p(n - t, t + 1) = P(Binomial(n, 1 - p) <= t))."""
    v = betainc(a, b, float(x))
    if abs(v - limit) > 1e-9 * limit:
        return v <= limit
    return None


def passes(n, t, p, c):
    if t < 0 or t >= n:
        return False
    r = below(n - t, t + 1, p, 1 - float(c))
    return exact_cdf(n, t, p, c) if r is None else r


def fails(n, t, p, c):
    # P(X >= t) = 1 - P(X <= t - 1) for X ~ Binomial(n, 1 - p)
    if t <= 0 or t > n:
        return False
    v = betainc(t, n - t + 1, 1 - float(p))
    lim = 1 - float(c)
    if abs(v - lim) > 1e-9 * lim:
        return v <= lim
    # exact: 1 - cdf(t - 1) <= 1 - c  <=>  cdf(t - 1) >= c
    pf, cf = Fraction(p), Fraction(c)
    cdf = sum(comb(n, k) * (1 - pf) ** k * pf ** (n - k) for k in range(t))
    return 1 - cdf <= 1 - cf


def h_min(t, p, c):
    """LoadGen's h_min: the smallest h with I_p(h, t + 1) <= 1 - c."""
    lo, hi = 0, 1
    while not passes(hi + t, t, p, c):
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if passes(mid + t, t, p, c):
            hi = mid
        else:
            lo = mid
    return hi


def rank(n, p, c):
    """The largest t with n >= h_min(t) + t, 0 if none: bisection on the
    monotone condition, then checked against h_min itself."""
    if n < 2 or not passes(n, 1, p, c):
        return 0
    lo, hi = 1, n - 1
    if passes(n, hi, p, c):
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if passes(n, mid, p, c):
            lo = mid
        else:
            hi = mid
    return lo


def run_helper(lines):
    out = subprocess.run([HELPER], input="".join(lines), capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def main():
    rnd = random.Random(21)
    exact_term_check()
    failures = []

    # the published table, exactly
    lines = []
    for p in TABLE:
        lines.append(f"H 0 {p} 0.99\n")
        lines.append(f"H 1 {p} 0.99\n")
    got = run_helper(lines)
    for i, (p, (h0, floor)) in enumerate(TABLE.items()):
        if int(got[2 * i]) != h0 or int(got[2 * i + 1]) + 1 != floor:
            failures.append(f"table p={p}: perfgate h_min(0)={got[2 * i]} floor={int(got[2 * i + 1]) + 1}")
        if h_min(0, p, "0.99") != h0 or h_min(1, p, "0.99") + 1 != floor:
            failures.append(f"table p={p}: the reference disagrees with MLPerf's table")

    # 10,000 random rule cases
    cases = []
    for _ in range(10000):
        n = int(round(10 ** rnd.uniform(0, 5.3)))
        if rnd.random() < 0.5:
            p = rnd.choice(list(TABLE))
        else:
            p = f"{rnd.uniform(0.5, 0.9999):.4f}"
        c = "0.99" if rnd.random() < 0.7 else rnd.choice(["0.9", "0.95", "0.999"])
        cases.append((n, p, c))
    got = run_helper([f"R {n} {p} {c}\n" for n, p, c in cases])
    checked_h = 0
    for (n, p, c), g in zip(cases, got):
        want = rank(n, p, c)
        if int(g) != want:
            failures.append(f"rank n={n} p={p} c={c}: perfgate {g}, reference {want}")
        elif want and n < 3000 and checked_h < 400:
            # LoadGen's characterisation, with h_min searched on its own
            checked_h += 1
            if not (h_min(want, p, c) + want <= n < h_min(want + 1, p, c) + want + 1):
                failures.append(f"rank n={n} p={p} c={c}: {want} is not LoadGen's t")

    # 2,000 server-rule and mirror decisions, near the interesting region
    cases = []
    for _ in range(2000):
        n = int(round(10 ** rnd.uniform(1, 4.5)))
        p = rnd.choice(list(TABLE)) if rnd.random() < 0.5 else f"{rnd.uniform(0.5, 0.999):.3f}"
        mean = n * (1 - float(p))
        t = max(0, int(round(rnd.gauss(mean, 2 * mean ** 0.5 + 1))))
        cases.append((n, t, p, "0.99"))
    got = run_helper([f"P {n} {t} {p} {c}\n" for n, t, p, c in cases])
    for (n, t, p, c), g in zip(cases, got):
        want = f"{int(passes(n, t, p, c))} {int(fails(n, t, p, c))}"
        if g != want:
            failures.append(f"passes/fails n={n} t={t} p={p}: perfgate {g}, reference {want}")

    # 2,000 values of I_x(a, b) over 10 orders of magnitude of a and b
    cases = []
    for _ in range(2000):
        a = 10 ** rnd.uniform(-1, 5)
        b = 10 ** rnd.uniform(-1, 5)
        x = rnd.choice([rnd.random(), rnd.random() ** 8, 1 - rnd.random() ** 8])
        cases.append((a, b, x))
    got = run_helper([f"B {a!r} {b!r} {x!r}\n" for a, b, x in cases])
    worst = 0.0
    for (a, b, x), g in zip(cases, got):
        want = float(betainc(a, b, x))
        err = abs(float(g) - want)
        worst = max(worst, err / max(want, 1e-300) if want > 1e-4 else err)
        if not err <= 1e-13 + 1e-9 * want:
            failures.append(f"betai({a!r}, {b!r}, {x!r}): perfgate {g}, scipy {want!r}")

    # 1,000 quantiles of Student's t (the frontier's intervals)
    cases = [(rnd.choice([0.9, 0.95, 0.975, 0.99, 0.995, rnd.uniform(0.51, 0.999)]),
              rnd.choice([1, 2, 3, 7, 10, 30, 100, rnd.uniform(0.5, 200)])) for _ in range(1000)]
    got = run_helper([f"T {p!r} {df!r}\n" for p, df in cases])
    for (p, df), g in zip(cases, got):
        want = float(student_t.ppf(p, df))
        # an interval needs a few digits; the beta function gives ~9
        if not abs(float(g) - want) <= 1e-7 * max(1.0, abs(want)):
            failures.append(f"t quantile p={p!r} df={df!r}: perfgate {g}, scipy {want!r}")

    for f in failures[:20]:
        print(f)
    print(f"tails: 10000 rank cases, 2000 decisions, 2000 beta values, 1000 t quantiles; "
          f"worst beta error {worst:.2e}; {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
