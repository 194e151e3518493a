"""English wording of generated logical forms: noun phrases and questions."""

from __future__ import annotations

import random

from lifelong_gym.envs.kg.sexpr import SExpr

# relation -> noun phrase of the entities reached from {x} through it
RELATION_PHRASES = {
    "location.location.containedby": "the country containing {x}",
    "location.location.contains": "the cities of {x}",
    "location.country.capital": "the capital of {x}",
    "location.citytown.capital_of": "the country whose capital is {x}",
    "location.country.official_language": "the official languages of {x}",
    "language.human_language.countries_spoken_in": "the countries where {x} is official",
    "people.person.nationality": "the nationality of {x}",
    "location.country.nationals": "the nationals of {x}",
    "people.person.place_of_birth": "the birthplace of {x}",
    "location.location.people_born_here": "the people born in {x}",
    "people.person.profession": "the professions of {x}",
    "people.profession.people_with_this_profession": "the people working as {x}",
    "people.person.education": "the university attended by {x}",
    "education.educational_institution.alumni": "the alumni of {x}",
    "film.film.directed_by": "the director of {x}",
    "film.director.film": "the films directed by {x}",
    "film.film.starring": "the actors of {x}",
    "film.actor.film": "the films starring {x}",
    "film.film.genre": "the genres of {x}",
    "film.film_genre.films_in_this_genre": "the films of the genre {x}",
    "film.film.country": "the country that produced {x}",
    "location.country.films": "the films produced in {x}",
    "film.film.language": "the language of {x}",
    "language.human_language.films": "the films in {x}",
    "music.album.artist": "the artist of {x}",
    "music.artist.album": "the albums by {x}",
    "music.album.genre": "the genre of {x}",
    "music.genre.albums": "the albums of the genre {x}",
    "business.company.headquarters": "the headquarters city of {x}",
    "location.location.companies_headquartered_here": "the companies based in {x}",
    "business.company.industry": "the industry of {x}",
    "business.industry.companies": "the companies in {x}",
    "business.company.founders": "the founders of {x}",
    "organization.organization_founder.organizations_founded": "the companies founded by {x}",
    "sports.sports_team.location": "the home city of {x}",
    "sports.sports_team_location.teams": "the sports teams of {x}",
    "sports.sports_team.sport": "the sport of {x}",
    "sports.sport.teams": "the teams playing {x}",
    "sports.sports_team.players": "the players of {x}",
    "sports.pro_athlete.teams": "the teams {x} played for",
    "education.university.city": "the city of {x}",
    "location.location.universities": "the universities in {x}",
}

# attribute -> (largest, smallest) wording
ATTRIBUTE_PHRASES = {
    "people.person.date_of_birth": ("was born last", "was born first"),
    "people.person.height_meters": ("is the tallest", "is the shortest"),
    "film.film.initial_release_date": ("came out last", "came out first"),
    "film.film.runtime": ("runs longest", "runs shortest"),
    "film.film.estimated_budget": ("had the biggest budget", "had the smallest budget"),
    "music.album.release_date": ("was released last", "was released first"),
    "music.album.track_count": ("has the most tracks", "has the fewest tracks"),
    "business.company.founded": ("was founded last", "was founded first"),
    "business.company.num_employees": ("employs the most people", "employs the fewest people"),
    "sports.sports_team.founded": ("was founded last", "was founded first"),
    "education.university.founded": ("was founded last", "was founded first"),
    "education.university.number_of_students": (
        "has the most students",
        "has the fewest students",
    ),
    "location.statistical_region.population": (
        "has the largest population",
        "has the smallest population",
    ),
    "location.location.area": ("has the largest area", "has the smallest area"),
}


def describe(expr: SExpr, names: dict[str, str]) -> str:
    """A noun phrase for the entities a logical form denotes."""
    if isinstance(expr, str):
        return names[expr]
    if expr[0] == "JOIN":
        return RELATION_PHRASES[expr[1][1]].format(x=describe(expr[2], names))
    if expr[0] == "AND":
        return f"{describe(expr[1], names)} that are also among {describe(expr[2], names)}"
    raise ValueError(f"no wording for {expr[0]}")


def list_question(phrase: str, rng: random.Random) -> str:
    """A question asking for the entities of a phrase."""
    frame = rng.choice(["What are {}?", "Which entities are {}?", "Name {}."])
    return frame.format(phrase)


def count_question(phrase: str) -> str:
    """A question asking how many entities a phrase covers."""
    return f"What is the number of {phrase}?"


def extreme_question(phrase: str, attribute: str, operator: str, rng: random.Random) -> str:
    """A question asking which entity of a phrase has the largest or smallest attribute."""
    most, least = ATTRIBUTE_PHRASES[attribute]
    wording = most if operator == "ARGMAX" else least
    frame = rng.choice(["Of {}, which one {}?", "Among {}, which {}?"])
    return frame.format(phrase, wording)
