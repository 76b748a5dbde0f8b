"""The budget bar pane's parts (the pane itself is ``panes/budgetbar.py``): the plot item and its lanes
(``plot``), the allowance/limit and provider marks (``marks``), the legend (``legend``), the caption and
hover words (``caption``) and the composition table (``composition``). The layout maths is core's
(``core.barlayout``, ``core.composition``)."""
