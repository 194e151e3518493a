"""The opening prompt of a KG task: the actions, a worked example, the question."""

from __future__ import annotations

from lifelong_gym.envs.kg.tasks import KGTask
from lifelong_gym.session import OpeningPrompt

INSTRUCTIONS = """\
You will answer a question by exploring a knowledge graph, one action per reply. Entities \
are given by their ids (such as m.0abc12); relations are named domain.type.property.

Actions (write exactly one line `Action: name(arguments)` per reply):
1. get_relations(E): the relations leaving E, an entity id or a variable.
2. get_neighbors(E, relation): the entities reached from E through one of its relations; \
the result becomes a new variable.
3. intersection(#A, #B): the entities in both variables; a new variable.
4. get_attributes(E): the relations of E whose values are numbers or dates.
5. argmax(#A, attribute): the entities of #A with the largest value of the attribute; a \
new variable.
6. argmin(#A, attribute): the same with the smallest value; a new variable.
7. count(#A): how many entities #A holds; a new variable.

Variables are numbered #0, #1, ... in the order they are made. A variable made by count, \
argmax or argmin can only be given as the final answer. When a variable holds the answer, \
reply `Final Answer: #N`. You have {max_turns} replies at most.

Example.
Question: which languages are spoken in the country where the city Lisbon lies? \
Entities: [m.04llb]
Action: get_relations(m.04llb)
Observation: [location.location.area, location.location.containedby, type.object.name]
Action: get_neighbors(m.04llb, location.location.containedby)
Observation: variable #0, which holds 1 entity
Action: get_relations(#0)
Observation: [location.country.capital, location.country.official_language]
Action: get_neighbors(#0, location.country.official_language)
Observation: variable #1, which holds 1 entity
Final Answer: #1

Now your task."""


TOOL_INSTRUCTIONS = """\
You will answer a question by exploring a knowledge graph, with one tool call per turn. \
Entities are given by their ids (such as m.0abc12); relations are named \
domain.type.property.

The tools: get_relations(entity), get_neighbors(entity, relation), intersection(first, \
second), get_attributes(entity), argmax(variable, attribute), argmin(variable, attribute), \
count(variable) explore the graph, as their descriptions say; the tools that make entity \
sets answer with a new variable. Variables are numbered #0, #1, ... in the order they are \
made. A variable made by count, argmax or argmin can only be given as the final answer. \
When a variable holds the answer, call final_answer(variable="#N"). You have {max_turns} \
turns at most; a turn without a tool call ends the task.

Example.
Question: which languages are spoken in the country where the city Lisbon lies? \
Entities: [m.04llb]
Turn 1: get_neighbors(entity="m.04llb", relation="location.location.containedby")
Result: variable #0, which holds 1 entity
Turn 2: get_neighbors(entity="#0", relation="location.country.official_language")
Result: variable #1, which holds 1 entity
Turn 3: final_answer(variable="#1")

Now your task."""


def opening_prompt(task: KGTask, max_turns: int = 15, action_format: str = "text") -> OpeningPrompt:
    """The instructions, the worked example, then the task's question and entity ids."""
    entities = ", ".join(task.entity_dict.values())
    question = f"Question: {task.question}, Entities: [{entities}]"
    instructions = TOOL_INSTRUCTIONS if action_format == "tools" else INSTRUCTIONS
    return OpeningPrompt(instructions.format(max_turns=max_turns), question, "\n")
