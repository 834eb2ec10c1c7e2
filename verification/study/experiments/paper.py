"""The paper's printed numbers (Liu et al., JMLR 2020, section "Experimental Results").

Typed in once from the LaTeX source (``shared/seeds/000_2f0603e8376763c2.txt``);
``tests/test_reproduce_paper.py`` parses that source, when present, and compares every entry.
Accuracies are in percent; regression errors are the paper's "RMSE" (its formula is the
relative squared error ``sum (g - y)^2 / sum (y - mean y)^2``). A ``True`` flag is the paper's
bullet (significantly better by a paired t-test at 5%; in Table 5: significantly
different from ``tau = 0.01``).
"""

from __future__ import annotations

__all__ = [
    "LARGE",
    "LARGE_SETTINGS",
    "SOCMKL",
    "SOCMKL_DN",
    "TAUS",
    "UCIRANK",
    "UCIREG",
    "UCIREG_DN",
    "UCIRES",
    "UCIRES_METHODS",
]

#: Table 1, ``(d, n)`` column as printed (spect: 21 printed, the files have 22 features)
SOCMKL_DN: dict[str, tuple[int, int]] = {
    "diabetic": (19, 1151), "heart": (13, 270), "monks1": (6, 124), "monks2": (6, 169),
    "monks3": (6, 122), "sonar": (60, 208), "spect": (21, 80), "glass": (9, 214),
    "fertility": (9, 100), "wine": (13, 178),
}

#: Table 1: set -> method -> ((train mean, std), (test mean, std)); "bullet": DANK
#: significantly better than the baselines (paired t-test, 5%)
SOCMKL: dict[str, dict] = {
    "diabetic": {"MKL-uniform": ((83.5, 14.2), (61.9, 8.5)), "SVM-CV": ((80.7, 3.9), (73.0, 1.7)),
                 "DANK": ((87.0, 1.9), (81.2, 1.4)), "bullet": True},
    "heart": {"MKL-uniform": ((95.8, 4.3), (82.1, 2.9)), "SVM-CV": ((88.9, 3.0), (81.9, 2.4)),
              "DANK": ((94.3, 1.7), (87.9, 2.9)), "bullet": True},
    "monks1": {"MKL-uniform": ((99.3, 1.3), (79.0, 2.8)), "SVM-CV": ((90.3, 0.0), (81.4, 0.0)),
               "DANK": ((100.0, 0.0), (83.6, 1.5)), "bullet": True},
    "monks2": {"MKL-uniform": ((100.0, 0.0), (84.4, 0.1)),
               "SVM-CV": ((100.0, 0.0), (85.8, 1.4)),
               "DANK": ((100.0, 0.0), (86.7, 0.9)), "bullet": False},
    "monks3": {"MKL-uniform": ((99.6, 1.3), (90.8, 0.6)), "SVM-CV": ((96.2, 1.5), (93.0, 1.2)),
               "DANK": ((97.2, 1.8), (93.0, 0.9)), "bullet": False},
    "sonar": {"MKL-uniform": ((100.0, 0.0), (80.8, 3.7)), "SVM-CV": ((99.9, 0.3), (85.3, 3.1)),
              "DANK": ((100.0, 0.0), (87.0, 2.7)), "bullet": True},
    "spect": {"MKL-uniform": ((93.8, 0.0), (79.8, 0.3)), "SVM-CV": ((87.0, 3.7), (73.1, 3.2)),
              "DANK": ((93.4, 4.1), (78.9, 3.2)), "bullet": False},
    "glass": {"MKL-uniform": ((93.4, 6.0), (53.0, 7.0)), "SVM-CV": ((77.1, 6.9), (69.8, 2.0)),
              "DANK": ((89.7, 6.1), (74.5, 1.3)), "bullet": True},
    "fertility": {"MKL-uniform": ((99.0, 1.4), (85.6, 3.0)), "SVM-CV": ((94.4, 5.3), (85.2, 1.7)),
                  "DANK": ((97.3, 3.3), (87.6, 2.3)), "bullet": True},
    "wine": {"MKL-uniform": ((100.0, 0.0), (96.0, 3.8)), "SVM-CV": ((99.5, 1.0), (94.7, 1.5)),
             "DANK": ((99.5, 1.0), (96.4, 2.0)), "bullet": False},
}

UCIRES_METHODS = ("LogDet", "BMKL", "RF", "KNPL", "DANK")

#: Table 2 (test accuracy): set -> method -> (mean, std, bullet)
UCIRES: dict[str, dict[str, tuple[float, float, bool]]] = {
    "diabetic": {"LogDet": (78.7, 1.8, False), "BMKL": (74.9, 0.4, False),
                 "RF": (72.3, 0.8, False), "KNPL": (81.9, 1.7, True), "DANK": (81.2, 1.4, True)},
    "heart": {"LogDet": (80.6, 3.5, False), "BMKL": (85.6, 0.8, False), "RF": (79.1, 2.4, False),
              "KNPL": (87.4, 3.9, True), "DANK": (87.9, 2.9, True)},
    "monks1": {"LogDet": (86.6, 0.2, False), "BMKL": (78.9, 2.5, False),
               "RF": (84.4, 0.9, False), "KNPL": (83.3, 3.3, False), "DANK": (83.6, 1.5, False)},
    "monks2": {"LogDet": (85.9, 1.2, False), "BMKL": (82.1, 1.3, False),
               "RF": (73.6, 1.1, False), "KNPL": (83.3, 1.6, False), "DANK": (86.7, 0.9, False)},
    "monks3": {"LogDet": (94.0, 1.3, False), "BMKL": (94.0, 1.0, False),
               "RF": (93.7, 0.6, False), "KNPL": (88.7, 1.2, False), "DANK": (93.0, 0.9, False)},
    "sonar": {"LogDet": (84.1, 2.2, False), "BMKL": (84.8, 0.6, False), "RF": (80.5, 3.1, False),
              "KNPL": (85.8, 2.8, False), "DANK": (87.0, 2.7, True)},
    "spect": {"LogDet": (79.6, 3.7, False), "BMKL": (78.8, 0.8, False), "RF": (76.0, 2.7, False),
              "KNPL": (79.7, 4.8, False), "DANK": (78.9, 3.2, False)},
    "glass": {"LogDet": (71.2, 1.0, False), "BMKL": (68.2, 4.6, False), "RF": (68.2, 2.2, False),
              "KNPL": (72.4, 2.3, False), "DANK": (74.5, 1.3, True)},
    "fertility": {"LogDet": (86.2, 1.1, False), "BMKL": (84.4, 1.6, False),
                  "RF": (84.4, 4.3, False), "KNPL": (85.6, 3.8, False),
                  "DANK": (87.6, 2.3, True)},
    "wine": {"LogDet": (96.1, 1.8, False), "BMKL": (95.0, 2.8, False), "RF": (95.1, 1.1, False),
             "KNPL": (96.1, 2.0, False), "DANK": (96.4, 2.0, False)},
}

TAUS = (0.0, 0.001, 0.01, 0.1, 1.0)

#: Table 5: set -> one (test mean, std, rank(F), bullet) per tau in TAUS
UCIRANK: dict[str, tuple[tuple[float, float, int, bool], ...]] = {
    "diabetic": ((78.1, 1.2, 340, True), (81.1, 1.2, 10, False), (81.2, 1.4, 5, False),
                 (81.2, 1.2, 2, False), (81.1, 1.2, 2, False)),
    "heart": ((84.9, 2.2, 109, True), (87.3, 2.2, 5, False), (87.9, 2.9, 3, False),
              (86.5, 2.5, 2, True), (85.4, 2.8, 1, True)),
    "monks1": ((82.1, 1.3, 68, True), (82.5, 1.4, 15, True), (83.6, 1.5, 6, False),
               (83.2, 1.4, 2, False), (81.7, 1.3, 1, True)),
    "monks2": ((85.5, 0.8, 68, True), (86.2, 0.7, 13, True), (86.7, 0.9, 4, False),
               (86.4, 0.8, 2, False), (86.0, 0.9, 2, True)),
    "monks3": ((90.2, 1.3, 61, True), (92.8, 1.0, 8, False), (93.0, 0.9, 4, False),
               (93.3, 1.1, 2, False), (92.8, 1.1, 1, False)),
    "sonar": ((84.0, 2.4, 81, True), (85.2, 2.4, 32, True), (87.0, 2.7, 17, False),
              (87.4, 2.6, 7, False), (86.8, 2.3, 3, True)),
    "spect": ((78.2, 2.6, 15, False), (78.4, 2.8, 8, False), (78.9, 3.2, 6, False),
              (78.4, 2.8, 3, False), (76.4, 2.5, 2, True)),
    "glass": ((72.3, 1.1, 34, True), (73.7, 1.4, 14, True), (74.5, 1.3, 8, False),
              (73.3, 1.2, 3, True), (71.4, 1.5, 2, True)),
    "fertility": ((86.8, 2.1, 29, True), (87.1, 2.2, 11, False), (87.6, 2.3, 5, False),
                  (87.3, 2.1, 3, False), (87.2, 2.2, 2, False)),
    "wine": ((96.1, 2.0, 5, False), (96.2, 1.9, 3, False), (96.4, 2.0, 2, False),
             (96.3, 2.0, 2, False), (96.3, 2.0, 2, False)),
}

#: Table 6 ``(d, n)`` as printed (cpusmall: 8912 printed, the file has 8192 rows)
UCIREG_DN: dict[str, tuple[int, int]] = {
    "bodyfat": (14, 252), "pyrim": (27, 74), "space": (6, 3107), "triazines": (60, 186),
    "cpusmall": (12, 8912), "housing": (13, 506), "mg": (6, 1385), "mpg": (7, 392),
}

#: Table 6: set -> column -> (mean, std, bullet); columns "BMKL" (test), "NW" (test),
#: "SVR-CV train", "SVR-CV test", "DANK train", "DANK test"
UCIREG: dict[str, dict[str, tuple[float, float, bool]]] = {
    "bodyfat": {"BMKL": (0.101, 0.065, False), "NW": (0.097, 0.010, False),
                "SVR-CV train": (0.007, 0.000, False), "SVR-CV test": (0.101, 0.002, False),
                "DANK train": (0.008, 0.000, False), "DANK test": (0.091, 0.013, False)},
    "pyrim": {"BMKL": (0.512, 0.115, False), "NW": (0.604, 0.115, False),
              "SVR-CV train": (0.013, 0.010, False), "SVR-CV test": (0.678, 0.255, False),
              "DANK train": (0.007, 0.004, False), "DANK test": (0.457, 0.143, True)},
    "space": {"BMKL": (0.248, 0.107, False), "NW": (0.308, 0.004, False),
              "SVR-CV train": (0.226, 0.144, False), "SVR-CV test": (0.261, 0.112, False),
              "DANK train": (0.106, 0.067, False), "DANK test": (0.202, 0.114, True)},
    "triazines": {"BMKL": (0.725, 0.124, False), "NW": (0.885, 0.039, False),
                  "SVR-CV train": (0.113, 0.084, False), "SVR-CV test": (0.815, 0.206, False),
                  "DANK train": (0.009, 0.012, False), "DANK test": (0.734, 0.128, False)},
    "cpusmall": {"BMKL": (0.133, 0.004, False), "NW": (0.037, 0.009, False),
                 "SVR-CV train": (0.037, 0.004, False), "SVR-CV test": (0.104, 0.002, False),
                 "DANK train": (0.001, 0.000, False), "DANK test": (0.114, 0.003, False)},
    "housing": {"BMKL": (0.286, 0.027, False), "NW": (0.177, 0.015, True),
                "SVR-CV train": (0.085, 0.049, False), "SVR-CV test": (0.267, 0.023, False),
                "DANK train": (0.069, 0.013, False), "DANK test": (0.218, 0.013, False)},
    "mg": {"BMKL": (0.297, 0.013, False), "NW": (0.294, 0.010, False),
           "SVR-CV train": (0.163, 0.076, False), "SVR-CV test": (0.407, 0.118, False),
           "DANK train": (0.134, 0.055, False), "DANK test": (0.303, 0.058, False)},
    "mpg": {"BMKL": (0.187, 0.014, False), "NW": (0.182, 0.012, False),
            "SVR-CV train": (0.095, 0.087, False), "SVR-CV test": (0.193, 0.006, False),
            "DANK train": (0.061, 0.010, False), "DANK test": (0.173, 0.008, True)},
}

#: Table 3: set -> (d, #train, #test, C, 1/(2 sigma^2), #clusters)
LARGE_SETTINGS: dict[str, tuple[int, int, int, float, float, int]] = {
    "EEG": (14, 7490, 7490, 32.0, 100.0, 5),
    "ijcnn1": (22, 49990, 91701, 32.0, 2.0, 50),
    "covtype": (54, 464810, 116202, 32.0, 32.0, 200),
}

#: Table 4: set -> method -> (accuracy %, time s, rank(F) or None); None = "x" (failed)
LARGE: dict[str, dict[str, tuple[float, float, int | None] | None]] = {
    "EEG": {"SVM-SMO": (95.9, 8.6, None), "LogDet exact": (95.9, 211.6, None),
            "LogDet scalable": (95.2, 24.6, None), "BMKL exact": (94.5, 1426.3, None),
            "BMKL scalable": (94.1, 124.5, None), "RF": (80.1, 2.4, None),
            "DANK exact": (96.7, 473.6, 36), "DANK scalable": (96.3, 39.8, 142)},
    "ijcnn1": {"SVM-SMO": (96.5, 112.4, None), "LogDet exact": (97.9, 8472.3, None),
               "LogDet scalable": (97.4, 78.1, None), "BMKL exact": (98.5, 109967.0, None),
               "BMKL scalable": (97.7, 1916.9, None), "RF": (93.0, 25.0, None),
               "DANK exact": (98.9, 28548.0, 342), "DANK scalable": (98.4, 571.7, 1788)},
    "covtype": {"SVM-SMO": (96.1, 3972.5, None), "LogDet exact": None,
                "LogDet scalable": (96.4, 5021.4, None), "BMKL exact": None,
                "BMKL scalable": (91.2, 94632.0, None), "RF": (79.1, 364.5, None),
                "DANK exact": None, "DANK scalable": (97.1, 7534.2, None)},
}
