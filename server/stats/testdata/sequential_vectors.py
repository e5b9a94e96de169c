#!/usr/bin/env python3
"""Expected values for server/stats: the sequential (always-valid) lift
comparison and the sample-ratio check, computed independently of the Go code.

Regenerate sequential_vectors.json after changing a case (from the repository
root):

    python3 server/stats/testdata/sequential_vectors.py > server/stats/testdata/sequential_vectors.json

The maths uses Python's math module only; json writes floats with repr, which
round-trips float64 exactly. Undefined numbers are written as null.
"""

import json
import math

TUNING = 5000.0  # total users at which the confidence sequence is tightest


def arm_conversion(users, converted):
    """Mean and variance of a 0/1 per-user value."""
    if users == 0:
        return 0.0, 0.0
    rate = converted / users
    return rate, rate * (1.0 - rate)


def arm_mean(users, total, total_sq):
    """Mean and sample variance (divisor users - 1, never negative)."""
    if users == 0:
        return 0.0, 0.0
    mean = total / users
    if users < 2:
        return mean, 0.0
    var = (total_sq - total * total / users) / (users - 1)
    return mean, var if var > 0.0 else 0.0


def summarise(arm):
    if "converted" in arm:
        return arm_conversion(arm["users"], arm["converted"])
    return arm_mean(arm["users"], arm["sum"], arm["sum_sq"])


def sequential(t_users, t_mean, t_var, c_users, c_mean, c_var, alpha):
    """Relative lift, delta-method standard error, confidence sequence, p."""
    out = {"lift": None, "se": None, "lower": None, "upper": None, "p": None}
    if c_mean == 0.0 or t_users < 2 or c_users < 2:
        return out
    lift = t_mean / c_mean - 1.0
    variance = (t_var / (t_users * c_mean ** 2)
                + c_var * t_mean ** 2 / (c_users * c_mean ** 4))
    se = math.sqrt(variance)
    out["lift"], out["se"] = lift, se
    if not se > 0.0:
        return out
    big_n = float(t_users + c_users)
    spread = math.sqrt(se ** 2 * big_n)
    log_term = -2.0 * math.log(alpha)
    rho = math.sqrt((log_term + math.log(log_term + 1.0)) / TUNING)
    grow = big_n * rho ** 2 + 1.0
    half = spread * math.sqrt(
        2.0 * grow * math.log(math.sqrt(grow) / alpha) / (big_n * rho) ** 2)
    out["lower"], out["upper"] = lift - half, lift + half
    stat_sq = lift ** 2 * big_n / se ** 2
    out["p"] = min(1.0, math.sqrt(grow) * math.exp(-rho ** 2 * stat_sq / (2.0 * grow)))
    return out


def regressed(case, result, direction, tolerance, min_users):
    if case["treatment"]["users"] < min_users or case["control"]["users"] < min_users:
        return False
    if result["lower"] is None:
        return False
    if direction == "increase":
        return result["lower"] > tolerance
    return result["upper"] < -tolerance


def sample_ratio(treatment, control, share, min_users):
    total = treatment + control
    if total == 0:
        return {"users": 0, "p": 1.0, "mismatch": False}
    exp_t = total * share
    exp_c = total * (1.0 - share)
    chi_sq = (treatment - exp_t) ** 2 / exp_t + (control - exp_c) ** 2 / exp_c
    p = math.erfc(math.sqrt(chi_sq / 2.0))
    return {"users": total, "p": p, "mismatch": total >= min_users and p < 0.001}


def conv(users, converted):
    return {"users": users, "converted": converted}


def mean(users, total, total_sq):
    return {"users": users, "sum": total, "sum_sq": total_sq}


SEQUENTIAL = [
    ("conversion tiny positive N=20", conv(10, 6), conv(10, 3), 0.05),
    ("conversion 2M small positive", conv(1_000_000, 101_000), conv(1_000_000, 100_000), 0.05),
    ("conversion 2M clear negative", conv(1_000_000, 97_000), conv(1_000_000, 100_000), 0.05),
    ("conversion negative alpha 0.01", conv(5_000, 450), conv(5_000, 500), 0.01),
    ("conversion alpha 0.2 unequal arms", conv(800, 120), conv(1_200, 150), 0.2),
    ("conversion 40k inconclusive", conv(20_000, 2_330), conv(20_000, 2_150), 0.05),
    ("conversion 40k just excludes 0", conv(20_000, 2_390), conv(20_000, 2_150), 0.05),
    ("conversion lopsided arms", conv(100, 30), conv(100_000, 20_000), 0.05),
    ("conversion control never converts", conv(50, 5), conv(50, 0), 0.05),
    ("conversion everyone converts se 0", conv(50, 50), conv(40, 40), 0.05),
    ("conversion one treatment user", conv(1, 1), conv(30, 10), 0.05),
    ("conversion no users", conv(0, 0), conv(0, 0), 0.05),
    ("mean small positive", mean(12, 150.0, 2_100.0), mean(8, 80.0, 900.0), 0.05),
    ("mean 200k negative alpha 0.01", mean(100_000, 2_450_000.0, 70_000_000.0),
     mean(100_000, 2_500_000.0, 72_000_000.0), 0.01),
    ("mean alpha 0.2 positive", mean(3_000, 36_000.0, 500_000.0), mean(3_000, 33_000.0, 420_000.0), 0.2),
    ("mean 2M latency", mean(1_000_000, 120_500_000.0, 1.6e10), mean(1_000_000, 120_000_000.0, 1.59e10), 0.05),
    ("mean constant values se 0", mean(5, 10.0, 20.0), mean(5, 5.0, 5.0), 0.05),
    # Three users of 1.3 each: the float sums make Σx² − (Σx)²/n about −8.9e-16, clamped to 0.
    ("mean variance clamped at 0", mean(3, 3.9000000000000004, 5.07), mean(3, 3.0, 3.5), 0.05),
    ("mean control one user", mean(20, 40.0, 100.0), mean(1, 2.0, 4.0), 0.05),
    ("mean control zero mean", mean(20, 40.0, 100.0), mean(20, 0.0, 50.0), 0.05),
]

CHECKS = [("increase", 0.0, 100), ("increase", 0.01, 100), ("decrease", 0.0, 100),
          ("decrease", 0.01, 100), ("decrease", 0.0, 20), ("increase", 0.0, 0)]

SAMPLE_RATIO = [
    ("balanced half", 5_000, 5_000, 0.5, 1_000),
    ("slightly off half", 5_050, 4_950, 0.5, 1_000),
    ("lopsided half", 5_300, 4_700, 0.5, 1_000),
    ("share 0.05 on target", 500, 9_500, 0.05, 1_000),
    ("share 0.05 slightly off", 520, 9_480, 0.05, 1_000),
    ("share 0.05 lopsided", 700, 9_300, 0.05, 1_000),
    ("lopsided below minimum", 30, 5, 0.5, 100),
    ("lopsided at minimum", 70, 30, 0.5, 100),
    ("no users", 0, 0, 0.5, 0),
    ("large balanced 2M", 1_000_300, 999_700, 0.5, 1_000),
]


def main():
    seq = []
    for name, t, c, alpha in SEQUENTIAL:
        t_mean, t_var = summarise(t)
        c_mean, c_var = summarise(c)
        result = sequential(t["users"], t_mean, t_var, c["users"], c_mean, c_var, alpha)
        case = {"name": name, "alpha": alpha, "treatment": t, "control": c}
        checks = [{"direction": d, "tolerance": tol, "min_users": mu,
                   "regressed": regressed(case, result, d, tol, mu)} for d, tol, mu in CHECKS]
        case["want"] = dict(result, treatment_mean=t_mean, treatment_variance=t_var,
                            control_mean=c_mean, control_variance=c_var)
        case["checks"] = checks
        seq.append(case)
    srm = []
    for name, ot, oc, share, min_users in SAMPLE_RATIO:
        srm.append({"name": name, "treatment": ot, "control": oc, "share": share,
                    "min_users": min_users, "want": sample_ratio(ot, oc, share, min_users)})
    print(json.dumps({"sequential": seq, "sample_ratio": srm}, indent=1))


if __name__ == "__main__":
    main()
