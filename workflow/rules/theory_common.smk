# Helpers of the theory stage (workflow/rules/theory.smk), included by it.


def get_theory_epsilons():
    grid = config["theory"]["epsilon_grid"]
    return [float(e) for e in np.linspace(grid["start"], grid["stop"], grid["num"])]
