"""The chapters as course assignments: ``handout`` makes an nbgrader course from chapter
notebooks, ``grading`` grades a class's submissions to a CSV. May use every layer below;
nothing of emu uses it."""
